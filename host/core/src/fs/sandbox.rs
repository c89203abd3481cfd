//! The process confines itself (Linux Landlock). cap-std keeps kura's own
//! file code beneath the roots; this keeps the whole process there — a bug
//! in a dependency or a future code path cannot open a file outside them
//! either, even through `std::fs`. Applied before the async runtime starts
//! a thread: Landlock restricts the calling thread and the threads it
//! creates afterwards (a kernel before Landlock ABI 8 cannot restrict
//! threads that already run).
//!
//! The rules: read-only beneath the manuals root, the configured
//! component files themselves and their signatures (where their links
//! lead; never the folder they sit in, which may be the working directory
//! or a home) and the
//! time-zone files (`daily/` dates are local); read-write beneath the vault, the vibe
//! root and the state folder; nothing else on the file system; no TCP bind
//! or connect (stdio needs none). Best effort by the kernel's ABI: what the
//! kernel cannot enforce is reported, never a reason to refuse to start.

use std::path::PathBuf;

use crate::config::{ComponentRef, Config, Slot};

/// Read-only beneath these besides the configured ones: the local time
/// zone, read by chrono when it first formats a local date.
const TIME_ZONE: [&str; 2] = ["/etc/localtime", "/usr/share/zoneinfo"];

/// What the resolver reads to look a host name up: readable only when a
/// slot is granted HTTP to a host by name.
const RESOLVER: [&str; 5] = [
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/nsswitch.conf",
    "/etc/host.conf",
    "/etc/gai.conf",
];

/// What the process may reach once confined.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// Read beneath these.
    pub read: Vec<PathBuf>,
    /// Read and write beneath these.
    pub write: Vec<PathBuf>,
    /// Remove an empty folder directly beneath these (the demo's temporary
    /// folder is removed from its parent at exit).
    pub remove_dir: Vec<PathBuf>,
    /// TCP ports the process may connect to (a slot's HTTP grant).
    pub connect: Vec<u16>,
}

impl Plan {
    /// This plan, plus read access to each configured component file and
    /// to the time-zone files. The rule is for the file where its path
    /// leads (resolved now, before confining): nothing beside it is
    /// readable, so `--plugin reranker=r.wasm` run from a home folder opens
    /// `r.wasm`, not the home. A component replaced by rename is a new file
    /// the rule does not cover: its reload is refused (the old one keeps
    /// serving) until kura restarts; one written over in place reloads.
    ///
    /// And what the slots are granted: a granted folder is readable; a
    /// granted HTTP host's port (80 and 443 when none is named) may be
    /// connected to, and the resolver's files are readable when a host is
    /// named rather than given as an address.
    pub fn with_components(mut self, config: &Config) -> Plan {
        for slot in Slot::ALL {
            let c = config.plugins.slot(slot);
            if let Some(folder) = &c.folder
                && !self.read.contains(folder)
            {
                self.read.push(folder.clone());
            }
            for host in c.http_hosts.iter().flatten() {
                self.grant_connect(host);
            }
            // A pulled component is read from the state folder.
            let Some(ComponentRef::File(path)) = c.component() else {
                continue;
            };
            // Its detached signature beside it, when there is one now (a
            // rule needs a file that exists: one added later is refused at
            // the reload, as the component is).
            let mut signature = path.as_os_str().to_owned();
            signature.push(".minisig");
            let signature = std::fs::canonicalize(PathBuf::from(signature)).ok();
            let file = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
            for file in std::iter::once(file).chain(signature) {
                if !self.read.contains(&file) {
                    self.read.push(file);
                }
            }
        }
        self.read.extend(TIME_ZONE.iter().map(PathBuf::from));
        self
    }
}

impl Plan {
    /// Let the process connect to `host`'s port (`host:port`; 80 and 443
    /// without one), and read the resolver's files when it is a name.
    pub fn grant_connect(&mut self, host: &str) {
        let (name, ports) = match host.rsplit_once(':') {
            Some((h, p)) if !h.is_empty() && (h.ends_with(']') || !h.contains(':')) => {
                (h, p.parse().map(|p| vec![p]).unwrap_or_default())
            }
            _ => (host, vec![80, 443]),
        };
        for p in ports {
            if !self.connect.contains(&p) {
                self.connect.push(p);
            }
        }
        let address = name
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok();
        if !address {
            for f in RESOLVER.map(PathBuf::from) {
                if !self.read.contains(&f) {
                    self.read.push(f);
                }
            }
        }
    }
}

/// What [`confine`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every rule is enforced.
    Full,
    /// The kernel enforces some of the rules (an older Landlock ABI).
    Partial,
    /// Not confined, and why.
    Not(String),
}

impl Outcome {
    /// The one log line that says what was applied.
    pub fn describe(&self, plan: &Plan) -> String {
        let list = |paths: &[PathBuf]| {
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let net = if plan.connect.is_empty() {
            "no TCP bind or connect".to_owned()
        } else {
            let ports: Vec<String> = plan.connect.iter().map(u16::to_string).collect();
            format!(
                "TCP connect to ports [{}] only (the slots' HTTP grants, the OAuth issuer), no bind",
                ports.join(", ")
            )
        };
        let rules = format!(
            "read-only [{}], read-write [{}], {net}",
            list(&plan.read),
            list(&plan.write)
        );
        match self {
            Outcome::Full => format!("sandbox: Landlock fully enforced: {rules}"),
            Outcome::Partial => format!(
                "sandbox: Landlock partly enforced (this kernel's ABI lacks some rights): {rules}"
            ),
            Outcome::Not(why) => format!("sandbox: not applied: {why}"),
        }
    }
}

/// Confine the calling thread and every thread it creates from now on.
#[cfg(target_os = "linux")]
pub fn confine(plan: &Plan) -> Outcome {
    use landlock::{
        ABI, Access, AccessFs, AccessNet, NetPort, Ruleset, RulesetAttr, RulesetCreatedAttr,
        RulesetStatus, make_bitflags, path_beneath_rules,
    };
    // The rights through Linux 6.12 (refer, truncate, device ioctl, TCP);
    // an older kernel enforces what it knows.
    let abi = ABI::V6;
    let applied = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
        .and_then(|r| r.handle_access(AccessNet::from_all(abi)))
        .and_then(|r| r.create())
        .and_then(|r| r.add_rules(path_beneath_rules(&plan.read, AccessFs::from_read(abi))))
        .and_then(|r| r.add_rules(path_beneath_rules(&plan.write, AccessFs::from_all(abi))))
        .and_then(|r| {
            r.add_rules(path_beneath_rules(
                &plan.remove_dir,
                make_bitflags!(AccessFs::{RemoveDir}),
            ))
        })
        .and_then(|r| {
            r.add_rules(
                plan.connect
                    .iter()
                    .map(|p| Ok(NetPort::new(*p, AccessNet::ConnectTcp))),
            )
        })
        .and_then(|r| r.restrict_self());
    match applied {
        Ok(status) => match status.ruleset {
            RulesetStatus::FullyEnforced => Outcome::Full,
            RulesetStatus::PartiallyEnforced => Outcome::Partial,
            RulesetStatus::NotEnforced => {
                Outcome::Not("this kernel does not support Landlock, or it is off".into())
            }
        },
        Err(e) => Outcome::Not(e.to_string()),
    }
}

#[cfg(not(target_os = "linux"))]
pub fn confine(_: &Plan) -> Outcome {
    Outcome::Not("Landlock is Linux only".into())
}

#[cfg(all(test, target_os = "linux"))]
#[allow(clippy::disallowed_methods)] // the test reads as any code would
mod tests {
    use super::*;

    /// Run `f` on a thread of its own, confined by `plan` (the test
    /// harness's other threads stay free).
    fn confined<T: Send + 'static>(
        plan: Plan,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> (Outcome, T) {
        std::thread::spawn(move || {
            let outcome = confine(&plan);
            (outcome, f())
        })
        .join()
        .unwrap()
    }

    #[test]
    fn a_confined_process_cannot_open_a_file_outside_its_roots_even_through_std_fs() {
        let t = tempfile::tempdir().unwrap();
        let (manuals, vault, outside) = (
            t.path().join("manuals"),
            t.path().join("vault"),
            t.path().join("outside"),
        );
        for d in [&manuals, &vault, &outside] {
            std::fs::create_dir(d).unwrap();
        }
        std::fs::write(manuals.join("m.md"), "manual").unwrap();
        std::fs::write(outside.join("secret.md"), "secret").unwrap();
        let plan = Plan {
            read: vec![manuals.clone()],
            write: vec![vault.clone()],
            ..Plan::default()
        };
        let (m, v, o) = (manuals.clone(), vault.clone(), outside.clone());
        let (outcome, r) = confined(plan, move || {
            (
                std::fs::read_to_string(m.join("m.md")).ok(),
                std::fs::write(m.join("new.md"), "x").is_err(),
                std::fs::write(v.join("note.md"), "written").is_ok(),
                std::fs::read_to_string(o.join("secret.md")).map_err(|e| e.kind()),
                std::fs::write(o.join("planted.md"), "x").is_err(),
                std::net::TcpListener::bind("127.0.0.1:0").is_err(),
            )
        });
        // Confined wherever the kernel has Landlock; where it has none
        // there is nothing to prove, and kura says so in its log line.
        assert_eq!(
            matches!(outcome, Outcome::Not(_)),
            kernel_abi() == 0,
            "{outcome:?}"
        );
        if kernel_abi() == 0 {
            return;
        }
        let (manual, manual_write_refused, vault_write, secret, plant_refused, bind_refused) = r;
        assert_eq!(
            manual.as_deref(),
            Some("manual"),
            "the manuals are readable"
        );
        assert!(manual_write_refused, "the manuals are read-only");
        assert!(vault_write, "the vault is writable");
        assert_eq!(
            secret,
            Err(std::io::ErrorKind::PermissionDenied),
            "a file outside the roots cannot be read"
        );
        assert!(plant_refused, "nothing can be written outside the roots");
        assert!(bind_refused, "no TCP listener");
        assert_eq!(
            std::fs::read_to_string(vault.join("note.md")).unwrap(),
            "written"
        );
        assert!(!outside.join("planted.md").exists());
    }

    /// A configuration whose reranker is `path`.
    fn reranker_at(path: PathBuf) -> Config {
        Config {
            plugins: crate::config::PluginsConfig {
                reranker: crate::config::SlotConfig {
                    path: Some(path),
                    ..Default::default()
                },
                ..Default::default()
            },
            ..Config::default()
        }
    }

    /// What a process confined by `plan` gets reading each of `paths`.
    fn reads(plan: Plan, paths: Vec<PathBuf>) -> Vec<Result<usize, std::io::ErrorKind>> {
        let (outcome, read) = confined(plan, move || {
            paths
                .iter()
                .map(|p| std::fs::read(p).map(|b| b.len()).map_err(|e| e.kind()))
                .collect()
        });
        assert_eq!(matches!(outcome, Outcome::Not(_)), kernel_abi() == 0);
        read
    }

    #[test]
    fn a_component_s_rule_is_for_its_file_never_the_folder_it_sits_in() {
        let dir = tempfile::tempdir().unwrap();
        let home = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::write(home.join("r.wasm"), b"\0asm").unwrap();
        std::fs::write(home.join("r.wasm.minisig"), b"sig").unwrap();
        std::fs::write(home.join(".netrc"), b"secret").unwrap();
        let plan = Plan::default().with_components(&reranker_at(home.join("r.wasm")));
        assert_eq!(plan.read[0], home.join("r.wasm"));
        assert_eq!(plan.read[1], home.join("r.wasm.minisig"), "its signature");
        assert!(plan.read.contains(&PathBuf::from("/etc/localtime")));
        assert!(!plan.read.contains(&home), "{plan:?}");
        assert!(plan.write.is_empty());
        let got = reads(
            plan,
            vec![
                home.join("r.wasm"),
                home.join("r.wasm.minisig"),
                home.join(".netrc"),
            ],
        );
        assert_eq!(got[..2], [Ok(4), Ok(3)]);
        if kernel_abi() > 0 {
            assert_eq!(got[2], Err(std::io::ErrorKind::PermissionDenied));
        }
    }

    #[test]
    fn a_component_behind_a_link_is_readable_where_it_leads_and_nothing_beside() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let (links, store) = (root.join("links"), root.join("store"));
        std::fs::create_dir_all(&links).unwrap();
        std::fs::create_dir_all(&store).unwrap();
        std::fs::write(store.join("r.wasm"), b"\0asm").unwrap();
        std::fs::write(store.join("other.wasm"), b"\0asm").unwrap();
        std::fs::write(links.join("notes.md"), b"n").unwrap();
        std::os::unix::fs::symlink(store.join("r.wasm"), links.join("r.wasm")).unwrap();
        let plan = Plan::default().with_components(&reranker_at(links.join("r.wasm")));
        assert_eq!(plan.read[0], store.join("r.wasm"));
        let got = reads(
            plan,
            vec![
                links.join("r.wasm"),
                store.join("other.wasm"),
                links.join("notes.md"),
            ],
        );
        assert_eq!(got[0], Ok(4), "read through its link");
        if kernel_abi() > 0 {
            assert_eq!(got[1], Err(std::io::ErrorKind::PermissionDenied));
            assert_eq!(got[2], Err(std::io::ErrorKind::PermissionDenied));
        }
    }

    #[test]
    fn the_sandbox_follows_a_slots_grants_and_nothing_more() {
        let dir = tempfile::tempdir().unwrap();
        let (weights, other) = (dir.path().join("weights"), dir.path().join("other"));
        std::fs::create_dir_all(&weights).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(weights.join("w.txt"), "1").unwrap();
        std::fs::write(other.join("secret.txt"), "s").unwrap();
        let granted = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let refused = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = |l: &std::net::TcpListener| l.local_addr().unwrap().port();
        let config = Config {
            plugins: crate::config::PluginsConfig {
                reranker: crate::config::SlotConfig {
                    http_hosts: Some(vec![
                        format!("127.0.0.1:{}", port(&granted)),
                        "scores.example.org".into(),
                    ]),
                    folder: Some(weights.clone()),
                    ..Default::default()
                },
                ..Default::default()
            },
            ..Config::default()
        };
        let plan = Plan::default().with_components(&config);
        assert_eq!(plan.connect, [port(&granted), 80, 443]);
        assert!(plan.read.contains(&weights));
        assert!(
            plan.read.contains(&PathBuf::from("/etc/resolv.conf")),
            "a named host"
        );
        let (g, r) = (port(&granted), port(&refused));
        let (w, o) = (weights.clone(), other.clone());
        let (outcome, got) = confined(plan, move || {
            (
                std::net::TcpStream::connect(("127.0.0.1", g)).is_ok(),
                std::net::TcpStream::connect(("127.0.0.1", r))
                    .map(drop)
                    .map_err(|e| e.kind()),
                std::fs::read_to_string(w.join("w.txt")).ok(),
                std::fs::read_to_string(o.join("secret.txt")).map_err(|e| e.kind()),
            )
        });
        if kernel_abi() < 4 {
            // No network rules before ABI 4: the plan is what can be shown.
            assert!(
                !matches!(outcome, Outcome::Full) || kernel_abi() == 0,
                "{outcome:?}"
            );
            return;
        }
        assert_eq!(outcome, Outcome::Full);
        let (connected, other_port, read, secret) = got;
        assert!(connected, "the granted port");
        assert_eq!(other_port, Err(std::io::ErrorKind::PermissionDenied));
        assert_eq!(read.as_deref(), Some("1"));
        assert_eq!(secret, Err(std::io::ErrorKind::PermissionDenied));
    }

    /// The kernel's Landlock ABI (0: none), asked directly.
    fn kernel_abi() -> i64 {
        // SAFETY: landlock_create_ruleset(NULL, 0, VERSION) only returns a
        // number.
        let abi = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<u8>(),
                0usize,
                1u32,
            )
        };
        abi.max(0)
    }
}
