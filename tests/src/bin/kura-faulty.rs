//! `kura` with the faults its `KURA_FAULT_*` variables describe armed: the
//! end-to-end tests' binary for a write step that fails, a process killed
//! half-way, a tool that panics or a slow search. It lives in the tests
//! crate so that no binary people run reads those variables.

fn main() -> std::process::ExitCode {
    kura::fault::arm(kura::fault::Plan::from_vars(|k| std::env::var(k).ok()));
    kura::cli::main()
}
