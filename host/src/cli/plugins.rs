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
            admission,
            settings,
        } => {
            let config = load_config(&settings)?;
            let slot = slot.as_deref().map(parse_slot).transpose()?;
            let report = check::check(&file, slot, &config, state_of(&config));
            print!("{report}");
            if !report.ok() {
                return Err(format!("{} did not pass the check", file.display()));
            }
            if admission.eval {
                let slot = report.slot.ok_or("the check found no slot")?;
                println!();
                if !crate::eval::admit(&file, slot, &config, &admission)? {
                    return Err(format!(
                        "{} was refused by the admission eval",
                        file.display()
                    ));
                }
            }
            Ok(())
        }
        PluginsCommand::Precompile { settings } => precompile(&settings),
        PluginsCommand::Pull {
            reference,
            plain_http,
            settings,
        } => pull(&reference, plain_http, &settings),
        PluginsCommand::Push {
            file,
            reference,
            signature,
            plain_http,
        } => push(&file, &reference, signature.as_deref(), plain_http),
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
        "{:<13} {:>9}  {:<19}  {:<20}  {:<18}  {:<26}  source",
        "slot (world)", "size", "digest", "signer", "load", "memory / deadline / inst."
    );
    let mut failed = false;
    for l in check::list(&config, state.as_ref())? {
        let limits = format!(
            "{} MiB / {} ms / {}",
            l.limits.memory_bytes >> 20,
            l.limits.timeout.as_millis(),
            l.limits.instances
        );
        let load = match &l.loaded {
            Ok(Some((origin, t))) => format!("{:.1} ms {origin}", t.as_secs_f64() * 1e3),
            Ok(None) => "-".into(),
            Err(_) => "refused".into(),
        };
        println!(
            "{:<13} {:>9}  {:<19}  {:<20}  {:<18}  {:<26}  {}",
            l.slot.name(),
            l.size
                .map(|s| format!("{:.1} MiB", s as f64 / (1 << 20) as f64))
                .unwrap_or_else(|| "-".into()),
            l.digest.as_ref().map(|d| d.short()).unwrap_or("-"),
            l.signer.as_deref().unwrap_or("-"),
            load,
            limits,
            l.source
        );
        if l.grants != "none" {
            println!("{:<13} grants: {}", "", l.grants);
        }
        if let Err(why) = &l.loaded {
            failed = true;
            println!("{:<13} error: {why}", "");
        }
    }
    if failed {
        Err("a slot's component cannot be loaded".into())
    } else {
        Ok(())
    }
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

/// How to reach a registry: plain HTTP when asked, and the account in
/// `KURA_REGISTRY_USERNAME` / `KURA_REGISTRY_PASSWORD` when set.
fn registry_options(plain_http: bool) -> crate::registry::Options {
    let var = |k| std::env::var(k).ok().filter(|v: &String| !v.is_empty());
    crate::registry::Options {
        plain_http,
        basic: var("KURA_REGISTRY_USERNAME").zip(var("KURA_REGISTRY_PASSWORD")),
    }
}

fn parse_reference(s: &str) -> Result<crate::config::OciRef, String> {
    crate::config::OciRef::parse(s)
}

/// `kura plugins pull`: into the store and the lock, every digest checked
/// and the signature judged as a start would judge it.
fn pull(reference: &str, plain_http: bool, settings: &Settings) -> Result<(), String> {
    use crate::plugins::{Trust, inspect, store};
    let reference = parse_reference(reference)?;
    let config = load_config(settings)?;
    let state = state_of(&config).ok_or("no usable state folder: set STATE_DIR or --state-dir")?;
    let trust = Trust::new(&config)?;
    let registry = crate::registry::Registry::new(&reference, &registry_options(plain_http));
    let pulled = tokio::runtime::Handle::current()
        .block_on(registry.pull(&reference))
        .map_err(|e| e.to_string())?;
    let outline = inspect::outline(&pulled.bytes).map_err(|e| format!("{reference}: {e}"))?;
    let slot = outline.slot().ok_or_else(|| {
        format!(
            "{reference} is a component for none of kura's slots (it exports: {})",
            outline.exports.join(", ")
        )
    })?;
    // wasi:http is what a grant provides: said below, required at start.
    outline
        .check(slot, true)
        .map_err(|e| format!("{reference}: {e}"))?;
    let wants_http = outline.imports.iter().any(|i| i.starts_with("wasi:http/"));
    let signer = trust
        .judge(&pulled.bytes, pulled.signature.as_deref())
        .map_err(|e| format!("{reference} {e}; nothing was kept"))?;
    store::put_blob(&state, &pulled.bytes)?;
    store::put_blob(&state, &pulled.manifest_bytes)?;
    let signature = match &pulled.signature {
        Some(s) => Some(store::put_blob(&state, s)?.to_string()),
        None => None,
    };
    let mut lock = store::Lock::read(&state)?;
    let old = lock.put(store::Locked {
        reference: reference.to_string(),
        manifest: pulled.manifest.to_string(),
        digest: pulled.digest.to_string(),
        size: pulled.bytes.len() as u64,
        signature,
        pulled: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    });
    lock.write(&state)?;
    println!("pulled    {reference}");
    println!("manifest  {}", pulled.manifest);
    println!(
        "digest    {} ({:.1} MiB, world {slot})",
        pulled.digest,
        pulled.bytes.len() as f64 / (1 << 20) as f64
    );
    println!("signer    {signer}");
    if wants_http {
        println!(
            "needs     outbound HTTP: grant it the hosts it may call (plugins.{}.http_hosts)",
            slot.key()
        );
    }
    let lock_path = state.path().join(store::LOCK);
    match old {
        Some(o) if o.digest != pulled.digest.as_str() => println!(
            "lock      {} (the reference moved: it was {} before)",
            lock_path.display(),
            o.digest
        ),
        Some(_) => println!("lock      {} (unchanged)", lock_path.display()),
        None => println!("lock      {}", lock_path.display()),
    }
    println!(
        "config    [plugins.{}]\n          path = \"{reference}\"\n          digest = \"{}\"",
        slot.key(),
        pulled.digest
    );
    Ok(())
}

/// `kura plugins push`: the component in the Wasm artifact layout and its
/// signature beside it.
fn push(
    file: &std::path::Path,
    reference: &str,
    signature: Option<&std::path::Path>,
    plain_http: bool,
) -> Result<(), String> {
    use crate::plugins::inspect;
    let reference = parse_reference(reference)?;
    let bytes =
        crate::fs::read_operator_file(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let outline = inspect::outline(&bytes).map_err(|e| format!("{}: {e}", file.display()))?;
    if outline.slot().is_none() {
        return Err(format!(
            "{} is a component for none of kura's slots (it exports: {})",
            file.display(),
            outline.exports.join(", ")
        ));
    }
    let signature = match signature {
        Some(p) => {
            Some(crate::fs::read_operator_file(p).map_err(|e| format!("{}: {e}", p.display()))?)
        }
        None => crate::plugins::signature_beside(file)?,
    };
    let digest = crate::config::Digest::of(&bytes);
    let config = crate::registry::WasmConfig::new(&digest, outline.exports, outline.imports);
    let registry = crate::registry::Registry::new(&reference, &registry_options(plain_http));
    let manifest = tokio::runtime::Handle::current()
        .block_on(
            registry.push(
                &reference,
                &bytes,
                &file
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "component.wasm".into()),
                &config,
                signature.as_deref(),
            ),
        )
        .map_err(|e| e.to_string())?;
    println!("pushed    {reference}");
    println!("manifest  {manifest}");
    println!("digest    {digest}");
    println!(
        "signature {}",
        if signature.is_some() {
            "pushed beside it"
        } else {
            "none (sign with `minisign -Sm FILE`)"
        }
    );
    println!("pull with kura plugins pull {}", reference.at(manifest));
    Ok(())
}
