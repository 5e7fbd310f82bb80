//! One module per subcommand: validate the parsed options, run, show the result.

pub mod io;
