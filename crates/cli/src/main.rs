//! `refault`: the command line (the program is the library's [`refault::main_with_args`]).

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(refault::main_with_args(std::env::args_os()))
}
