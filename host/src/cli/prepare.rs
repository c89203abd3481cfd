//! What `serve` and `call` open before the async runtime starts: the
//! HTTP listener, the configuration, the demo's copy, the roots, and the
//! sandbox around them.

use super::Command;
use super::settings::load_config;

/// What `serve` and `call` set up before the async runtime starts a thread:
/// the roots and state folder opened, the demo's copy, and the sandbox
/// around them (Landlock confines the calling thread and the threads it
/// creates later). The sandbox's line is logged once the start succeeded.
pub(super) struct Prepared {
    opened: crate::app::Opened,
    demo: Option<crate::demo::DemoData>,
    sandbox: (tracing::Level, String),
    http: Option<(std::net::TcpListener, crate::server::HttpOptions)>,
}

impl Prepared {
    pub(super) fn start(self) -> Result<Started, String> {
        let app = self.opened.start().map_err(|e| e.to_string())?;
        match self.sandbox {
            (tracing::Level::WARN, line) => tracing::warn!("{line}"),
            (_, line) => tracing::info!("{line}"),
        }
        Ok(Started {
            app: std::sync::Arc::new(app),
            demo: self.demo,
            http: self.http,
        })
    }
}

pub(super) struct Started {
    pub app: std::sync::Arc<crate::app::App>,
    /// Removed when dropped: kept until the server ends.
    pub demo: Option<crate::demo::DemoData>,
    pub http: Option<(std::net::TcpListener, crate::server::HttpOptions)>,
}

pub(super) fn prepare(command: &Command) -> Result<Option<Prepared>, String> {
    let (settings, demo, http) = match command {
        Command::Serve {
            settings,
            demo,
            http,
        } => (settings, *demo, http.http.map(|addr| (http, addr))),
        Command::Call { settings, .. } => (settings, false, None),
        Command::History(a) => (&a.settings, false, None),
        Command::Undo(a) => (&a.settings, false, None),
        _ => return Ok(None),
    };
    let http = match http {
        Some((flags, addr)) => Some(flags.open(addr)?),
        None => None,
    };
    let mut config = load_config(settings)?;
    let demo = match demo {
        true => Some(crate::demo::DemoData::create().map_err(|e| e.to_string())?),
        false => None,
    };
    if let Some(d) = &demo {
        config = d.configure(config);
    }
    let confine = config.sandbox;
    let opened = crate::app::App::open(config, crate::CATALOG).map_err(|e| e.to_string())?;
    let sandbox = if confine {
        let mut plan = opened.sandbox();
        // The OAuth issuer's host is the one the core itself may reach.
        if let Some(oauth) = http.as_ref().and_then(|(_, o)| o.oauth.as_ref()) {
            for host in oauth.config().hosts() {
                plan.grant_connect(&host);
            }
        }
        if let Some(d) = &demo {
            plan = d.sandbox(plan);
        }
        let outcome = crate::fs::sandbox::confine(&plan);
        let level = match outcome {
            crate::fs::sandbox::Outcome::Not(_) => tracing::Level::WARN,
            _ => tracing::Level::INFO,
        };
        (level, outcome.describe(&plan))
    } else {
        (
            tracing::Level::INFO,
            "sandbox: off (sandbox = false)".to_owned(),
        )
    };
    Ok(Some(Prepared {
        opened,
        demo,
        sandbox,
        http,
    }))
}
