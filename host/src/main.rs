//! The `kura` command: everything is in the library's `cli` module, so
//! that the binary is one call.

fn main() -> std::process::ExitCode {
    kura::cli::main()
}
