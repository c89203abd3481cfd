//! `kura plugins ...`: list, check, precompile, new.

use super::settings::load_config;
use super::{PluginsCommand, Settings};
use crate::config::Config;

fn parse_slot(s: &str) -> Result<crate::config::Slot, String> {
    crate::config::Slot::parse(s).ok_or_else(|| {
        format!(
            "unknown slot `{s}` (slots: {})",
            crate::config::Slot::names()
        )
    })
}

/// The state folder of a configuration, when it can be opened.
fn state_of(config: &Config) -> Option<crate::fs::StateDir> {
    config
        .state_dir()
        .and_then(|p| crate::fs::StateDir::open(&p).ok())
}

/// `kura plugins ...`: reports on stdout; a failed check exits non-zero.
pub(super) fn run(command: PluginsCommand) -> Result<(), String> {
    use crate::plugins::check;
    match command {
        PluginsCommand::List { settings } => list(&settings),
        PluginsCommand::Check {
            file,
            slot,
            settings,
        } => {
            let config = load_config(&settings)?;
            let slot = slot.as_deref().map(parse_slot).transpose()?;
            let report = check::check(&file, slot, &config);
            print!("{report}");
            if report.ok() {
                Ok(())
            } else {
                Err(format!("{} did not pass the check", file.display()))
            }
        }
        PluginsCommand::Precompile { settings } => precompile(&settings),
        PluginsCommand::New { lang, slot, dir } => {
            let slot = parse_slot(&slot)?;
            let written = crate::plugins::template::write(&lang, slot, &dir)?;
            for f in &written {
                println!("wrote {}", f.display());
            }
            println!(
                "{}",
                crate::plugins::template::next_steps(&lang, slot, &dir)?
            );
            Ok(())
        }
    }
}

/// `kura plugins list`: one line per slot.
fn list(settings: &Settings) -> Result<(), String> {
    use crate::plugins::check;
    let config = load_config(settings)?;
    let state = state_of(&config);
    println!(
        "{:<13} {:>9}  {:<16}  {:<15}  {:<28}  source",
        "slot (world)", "size", "blake3", "compiled", "memory / deadline / instances"
    );
    for l in check::list(&config, state.as_ref())? {
        let limits = format!(
            "{} MiB / {} ms / {}",
            l.limits.memory_bytes >> 20,
            l.limits.timeout.as_millis(),
            l.limits.instances
        );
        println!(
            "{:<13} {:>9}  {:<16}  {:<15}  {:<28}  {}",
            l.slot.name(),
            l.size
                .map(|s| format!("{:.1} MiB", s as f64 / (1 << 20) as f64))
                .unwrap_or_else(|| "-".into()),
            l.hash.unwrap_or_else(|| "-".into()),
            l.compiled,
            limits,
            l.source
        );
    }
    Ok(())
}

/// `kura plugins precompile`: each configured component into the cache.
fn precompile(settings: &Settings) -> Result<(), String> {
    use crate::plugins::check;
    let config = load_config(settings)?;
    let state = state_of(&config);
    if state.is_none() {
        return Err("no usable state folder: set STATE_DIR or --state-dir".into());
    }
    let mut failed = false;
    for (slot, outcome) in check::precompile(&config, state.as_ref()) {
        match outcome {
            Ok(said) => println!("{:<13} {said}", slot.name()),
            Err(e) => {
                failed = true;
                println!("{:<13} error: {e}", slot.name());
            }
        }
    }
    if failed {
        Err("some components could not be loaded".into())
    } else {
        Ok(())
    }
}
