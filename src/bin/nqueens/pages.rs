//! What the program prints about itself, from the same definitions as `--help`, so that they
//! cannot drift from it: shell completion scripts and manual pages.

use crate::cli::Cli;
use clap::CommandFactory;

/// The completion script for `shell`.
pub fn completions(shell: clap_complete::Shell) -> Vec<u8> {
    // generated into memory first: clap_complete panics when its writer fails
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "nqueens", &mut script);
    script
}

/// The manual page nqueens(1), or nqueens-COMMAND(1) for `command`; the inner error names
/// a command that does not exist, and the ones that do.
pub fn man(command: Option<&str>) -> std::io::Result<Result<Vec<u8>, String>> {
    let mut cmd = Cli::command();
    cmd.build();
    let cmd = match command {
        None => cmd,
        Some(name) => {
            let ours = |c: &&clap::Command| c.get_name() != "help";
            let Some(sub) = cmd.find_subcommand(name).filter(ours) else {
                let names: Vec<&str> = cmd
                    .get_subcommands()
                    .filter(ours)
                    .map(|c| c.get_name())
                    .collect();
                return Ok(Err(format!(
                    "no command '{name}': one of {}",
                    names.join(", ")
                )));
            };
            let page = format!("nqueens-{}", sub.get_name());
            sub.clone()
                .display_name(page)
                .bin_name(format!("nqueens {name}"))
        }
    };
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd).render(&mut page)?;
    Ok(Ok(page))
}
