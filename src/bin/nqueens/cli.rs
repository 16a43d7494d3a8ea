//! Command-line arguments as parsed (clap), and their checks into library options.

use clap::{Args, Parser, Subcommand, ValueEnum};
use nqueens::Format;
use nqueens::ListOptions;
use nqueens::Shard;
use nqueens::MAX_N;
use nqueens::MAX_THREADS;
use std::num::NonZeroU32;
use std::path::PathBuf;

use crate::progress::ProgressMode;
use nqueens::{
    CountOptions, DeviceChoice, EngineChoice, Error, KernelChoice, RaceOptions, RunRequest,
};
use std::time::Duration;

/// Counts and lists N-Queens solutions on every core.
#[derive(Parser, Debug)]
#[command(name = "nqueens", version, about, propagate_version = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Count all solutions on an N×N board.
    Count(CountArgs),
    /// List solutions in lexicographic order.
    List(ListArgs),
    /// Add up the `count --json` results of the shards of one run.
    Merge(MergeArgs),
    /// Measure how `count N` scales with threads.
    Scale(ScaleArgs),
    /// Estimate what `count N` would cost on this machine's CPU, from random subtasks timed.
    Estimate(EstimateArgs),
    /// List the GPU adapters: their numbers for --gpus, names and kinds.
    Devices,
    /// Print a shell completion script (bash, zsh, fish, ...).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print a manual page (roff, for man(1)): nqueens(1), or nqueens-COMMAND(1) for one
    /// command (`nqueens man count > nqueens-count.1`).
    Man {
        /// The command whose page to print (count, list, merge, scale, estimate, devices,
        /// completions, man); none: the program's.
        command: Option<String>,
    },
}

/// `nqueens scale N`.
#[derive(Args, Debug)]
pub struct ScaleArgs {
    /// Board side, 1 to 32.
    #[arg(value_parser = parse_n, allow_negative_numbers = true)]
    pub n: usize,
    /// Thread counts, e.g. 1,2,4 (default: NQUEENS_THREADS where set, else 1, 2, 4, ... up
    /// to all logical CPUs).
    #[arg(short, long, value_delimiter = ',', value_parser = parse_threads, allow_negative_numbers = true)]
    pub threads: Option<Vec<usize>>,
    /// Timed runs per thread count.
    #[arg(long, default_value_t = NonZeroU32::new(3).unwrap(), value_parser = whole(NonZeroU32::MIN, NonZeroU32::MAX), allow_negative_numbers = true)]
    pub repeat: NonZeroU32,
    /// Pin worker threads to cores.
    #[arg(long)]
    pub pin: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ScaleFormat::Table)]
    pub format: ScaleFormat,
    /// Also draw speedup against threads, with the ideal line, as an SVG file.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    #[command(flatten)]
    pub how: HowArgs,
}

/// How a count runs: the flags `count` and `scale` share.
#[derive(Args, Debug, Clone)]
pub struct HowArgs {
    /// Symmetry decomposition.
    #[arg(long, value_enum, default_value_t = EngineChoice::Auto)]
    pub engine: EngineChoice,
    /// Leaf search kernel.
    #[arg(long, value_enum, default_value_t = KernelChoice::Auto)]
    pub kernel: KernelChoice,
    /// Where the search runs: every GPU for large boards when there is one, the CPU, the GPUs
    /// with the CPU threads sharing their work, or the GPUs alone.
    #[arg(long, value_enum, default_value_t = DeviceChoice::Auto)]
    pub device: DeviceChoice,
    /// GPU adapters to count on, by their number in `nqueens devices` (default: every GPU).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = at_least(0usize), allow_negative_numbers = true)]
    pub gpus: Option<Vec<usize>>,
    /// Memory the quadrant engine's tables may take, like 512M or 4G (default: half the RAM,
    /// or of the process's address-space or cgroup limit when less).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, allow_negative_numbers = true)]
    pub memory_limit: Option<u64>,
}

impl HowArgs {
    /// These flags as count options (the rest at their defaults).
    fn options(&self) -> CountOptions {
        CountOptions {
            engine: self.engine,
            kernel: self.kernel,
            device: self.device,
            gpus: self.gpus.clone(),
            memory_limit: self.memory_limit,
            ..CountOptions::default()
        }
    }
}

/// `--format` of `scale`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScaleFormat {
    /// Aligned columns for people.
    Table,
    /// Comma-separated values with a header.
    Csv,
    /// One JSON object with machine facts.
    Json,
    /// A markdown table.
    Md,
}

impl ScaleArgs {
    /// The thread counts to measure: `--threads`, else `NQUEENS_THREADS` (read by `env`),
    /// else none named.
    pub fn threads(
        &self,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Vec<usize>>, Error> {
        match &self.threads {
            Some(list) => Ok(Some(list.clone())),
            None => CountOptions::threads_from_vars(env),
        }
    }

    /// The count options each run uses (threads are set per run), the race's settings read
    /// by `env` as `count` reads them.
    pub fn options(&self, env: impl Fn(&str) -> Option<String>) -> Result<CountOptions, Error> {
        Ok(CountOptions {
            pin: self.pin,
            race: RaceOptions::from_vars(env)?,
            ..self.how.options()
        })
    }
}

/// `nqueens merge FILE...`.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Shard results: files of `count --json` lines ("-" reads stdin).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Print one JSON object instead of the plain total.
    #[arg(long)]
    pub json: bool,
    /// Recount K randomly chosen subtasks of every shard and refuse on any difference.
    #[arg(long, value_name = "K", value_parser = whole(1, u64::MAX), allow_negative_numbers = true)]
    pub verify: Option<u64>,
    /// Add up shard records that carry no per-subtask parts on their totals alone (they are
    /// refused otherwise: nothing checks such a total).
    #[arg(long)]
    pub trust_totals: bool,
    /// Add up the shards given when some are still missing (a run in progress): the sum is
    /// printed and the missing shards named on stderr (JSON: `complete` false,
    /// `missing_shards`).
    #[arg(long)]
    pub partial: bool,
    #[command(flatten)]
    pub search: SearchArgs,
}

/// Flags shared by every command that searches.
#[derive(Args, Debug, Clone)]
pub struct SearchArgs {
    /// Worker threads (default: NQUEENS_THREADS where set, else all logical CPUs).
    #[arg(short, long, value_parser = parse_threads, allow_negative_numbers = true)]
    pub threads: Option<usize>,
}

impl SearchArgs {
    /// The worker threads: `--threads`, else `NQUEENS_THREADS` (read by `env`, one count),
    /// else none named.
    pub fn threads(&self, env: impl Fn(&str) -> Option<String>) -> Result<Option<usize>, Error> {
        if self.threads.is_some() {
            return Ok(self.threads);
        }
        match CountOptions::threads_from_vars(env)?.as_deref() {
            None => Ok(None),
            Some(&[one]) => Ok(Some(one)),
            Some(list) => {
                let list: Vec<String> = list.iter().map(usize::to_string).collect();
                Err(Error::BadEnv(format!(
                    "invalid value '{}' for the variable NQUEENS_THREADS: one thread count is allowed here (a list is scale's)",
                    list.join(",")
                )))
            }
        }
    }
}

/// `nqueens count N`.
#[derive(Args, Debug)]
pub struct CountArgs {
    /// Board side, 1 to 32.
    #[arg(value_parser = parse_n, allow_negative_numbers = true)]
    pub n: usize,
    #[command(flatten)]
    pub search: SearchArgs,
    /// Print one JSON object instead of the plain total.
    #[arg(long)]
    pub json: bool,
    /// Also count fundamental solutions (distinct up to rotation and reflection).
    #[arg(long)]
    pub unique: bool,
    #[command(flatten)]
    pub how: HowArgs,
    /// Count only the completions of these first rows (1-based columns, e.g. "1 3 5").
    #[arg(long, allow_hyphen_values = true)]
    pub prefix: Option<String>,
    /// Rows enumerated into subtasks (default: chosen from N).
    #[arg(long, value_parser = at_least(1usize), allow_negative_numbers = true)]
    pub split_depth: Option<usize>,
    /// Print time, engine, kernel, subtasks and search nodes on stderr.
    #[arg(long)]
    pub stats: bool,
    /// A progress bar with ETA on stderr.
    #[arg(long, value_enum, default_value_t = ProgressMode::Auto)]
    pub progress: ProgressMode,
    /// Save finished subtasks to FILE as the run goes, and resume from it when it exists.
    #[arg(long, value_name = "FILE")]
    pub checkpoint: Option<PathBuf>,
    /// Seconds between checkpoint saves (0.1 to 86400).
    #[arg(long, value_name = "SECONDS", default_value_t = 2.0, value_parser = seconds(SAVE_EVERY_SECONDS), allow_negative_numbers = true)]
    pub checkpoint_every: f64,
    /// Count only shard I (0-based) of M (default: from SLURM_ARRAY_TASK_ID/COUNT or
    /// JOB_COMPLETION_INDEX/NQUEENS_SHARDS).
    #[arg(long, value_name = "I/M", value_parser = parse_shard, allow_hyphen_values = true)]
    pub shard: Option<Shard>,
    /// Check the arguments and print the plan this count would run (engine, subtasks, digest,
    /// shard) as one line, without counting.
    #[arg(long)]
    pub dry_run: bool,
}

/// `nqueens estimate N`.
#[derive(Args, Debug)]
pub struct EstimateArgs {
    /// Board side, 1 to 32.
    #[arg(value_parser = parse_n, allow_negative_numbers = true)]
    pub n: usize,
    #[command(flatten)]
    pub search: SearchArgs,
    /// Seconds to spend counting sampled subtasks (a subtask under way is finished, and two
    /// are counted at the least, however long they take).
    #[arg(long, value_name = "S", default_value_t = 60.0, value_parser = seconds(SAMPLE_SECONDS), allow_negative_numbers = true)]
    pub seconds: f64,
    /// The seed of the random order subtasks are drawn in: the same seed draws the same ones.
    #[arg(long, default_value_t = 1, value_parser = whole(0, u64::MAX), allow_negative_numbers = true)]
    pub seed: u64,
    /// Print one JSON object instead of the lines for people.
    #[arg(long)]
    pub json: bool,
    /// Estimate the count with fundamental solutions.
    #[arg(long)]
    pub unique: bool,
    /// Symmetry decomposition.
    #[arg(long, value_enum, default_value_t = EngineChoice::Auto)]
    pub engine: EngineChoice,
    /// Leaf search kernel.
    #[arg(long, value_enum, default_value_t = KernelChoice::Auto)]
    pub kernel: KernelChoice,
    /// Memory the quadrant engine's tables may take, like 512M or 4G (default: as `count`).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, allow_negative_numbers = true)]
    pub memory_limit: Option<u64>,
    /// Rows enumerated into subtasks (default: chosen from N).
    #[arg(long, value_parser = at_least(1usize), allow_negative_numbers = true)]
    pub split_depth: Option<usize>,
    /// Estimate only shard I (0-based) of M.
    #[arg(long, value_name = "I/M", value_parser = parse_shard, allow_hyphen_values = true)]
    pub shard: Option<Shard>,
}

impl EstimateArgs {
    /// The count these flags ask to estimate, `NQUEENS_THREADS` read by `env`.
    pub fn request(&self, env: impl Fn(&str) -> Option<String>) -> Result<RunRequest, Error> {
        let options = CountOptions {
            threads: self.search.threads(&env)?,
            unique: self.unique,
            split_depth: self.split_depth,
            engine: self.engine,
            kernel: self.kernel,
            memory_limit: self.memory_limit,
            ..CountOptions::default()
        };
        Ok(RunRequest {
            shard: self.shard.unwrap_or(Shard::WHOLE),
            ..RunRequest::new(self.n, options, None)
        })
    }
}

/// `nqueens list N`.
#[derive(Args, Debug)]
pub struct ListArgs {
    /// Board side, 1 to 32.
    #[arg(value_parser = parse_n, allow_negative_numbers = true)]
    pub n: usize,
    #[command(flatten)]
    pub search: SearchArgs,
    /// Print only the first K solutions.
    #[arg(long, value_name = "K", value_parser = whole(0, u64::MAX), allow_negative_numbers = true)]
    pub limit: Option<u64>,
    /// After the solutions, print the total number of solutions (of classes with --unique).
    #[arg(long)]
    pub total: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Seq)]
    pub format: Format,
    /// One solution per symmetry class: its lexicographically smallest form.
    #[arg(long)]
    pub unique: bool,
}

impl ListArgs {
    /// The library options these flags ask for, `NQUEENS_THREADS` read by `env`.
    pub fn options(&self, env: impl Fn(&str) -> Option<String>) -> Result<ListOptions, Error> {
        Ok(ListOptions {
            threads: self.search.threads(env)?,
            limit: self.limit,
            unique: self.unique,
            format: self.format,
        })
    }
}

impl CountArgs {
    /// The run these flags ask for. Without `--shard`, the shard comes from a batch
    /// scheduler's variables (`env` reads one); one shard of one is the whole count.
    pub fn request(&self, env: impl Fn(&str) -> Option<String>) -> Result<RunRequest, Error> {
        let prefix = match &self.prefix {
            Some(p) => Some(parse_prefix(p, self.n).map_err(Error::BadPrefix)?),
            None => None,
        };
        let shard = match self.shard {
            Some(s) => Some(s),
            None => Shard::from_env(&env)?,
        };
        let options = CountOptions {
            threads: self.search.threads(&env)?,
            race: RaceOptions::from_vars(&env)?,
            ..self.options()
        };
        Ok(RunRequest {
            shard: shard.filter(|s| s.count > 1).unwrap_or(Shard::WHOLE),
            checkpoint: self.checkpoint.clone(),
            save_every: Duration::from_secs_f64(self.checkpoint_every),
            ..RunRequest::new(self.n, options, prefix)
        })
    }

    /// The library options these flags ask for (the threads as `--threads` names them: the
    /// variable is read by [`CountArgs::request`]).
    pub fn options(&self) -> CountOptions {
        CountOptions {
            threads: self.search.threads,
            unique: self.unique,
            split_depth: self.split_depth,
            ..self.how.options()
        }
    }
}

/// A parser of whole numbers from `min` to `max` whose refusal states that range (clap's
/// own words were "invalid digit found in string", and `-1` was taken for a flag).
fn whole<T>(min: T, max: T) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy + Send + Sync + 'static,
{
    move |s: &str| match s.trim().parse::<T>() {
        Ok(v) if min <= v && v <= max => Ok(v),
        _ => Err(format!("a whole number from {min} to {max} is allowed")),
    }
}

/// [`whole`] for a flag whose largest value depends on the board or the machine (the
/// library refuses a value past it, naming the real bound).
fn at_least<T>(min: T) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy + Send + Sync + 'static,
{
    move |s: &str| match s.trim().parse::<T>() {
        Ok(v) if min <= v => Ok(v),
        _ => Err(format!("a whole number from {min} up is allowed")),
    }
}

/// Parses a board side.
pub fn parse_n(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_N).contains(&n) => Ok(n),
        _ => Err(format!("N must be an integer from 1 to {MAX_N}")),
    }
}

/// Parses a thread count: 1 to [`MAX_THREADS`].
pub fn parse_threads(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(t) if (1..=MAX_THREADS).contains(&t) => Ok(t),
        _ => Err(format!(
            "threads must be an integer from 1 to {MAX_THREADS}"
        )),
    }
}

/// Parses a memory size: bytes, or a number with K, M, G or T (powers of 1024).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (digits, shift) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let shift = match c.to_ascii_uppercase() {
                'K' => 10,
                'M' => 20,
                'G' => 30,
                'T' => 40,
                _ => return Err(size_error()),
            };
            (&t[..i], shift)
        }
        _ => (t, 0),
    };
    // a number of digits too large for the unit is too large, not malformed
    let too_large = || {
        let most = u64::MAX >> shift;
        let unit = &t[digits.len()..];
        format!("memory limit too large: at most {most}{unit} (16 EiB less a byte)")
    };
    match digits.parse::<u64>() {
        Ok(v) => v.checked_mul(1 << shift).ok_or_else(too_large),
        Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => Err(too_large()),
        Err(_) => Err(size_error()),
    }
}

fn size_error() -> String {
    "memory limit must be a whole number of bytes, optionally with K, M, G or T (like 512M)".into()
}

/// Parses a prefix of 1-based columns ("1 3 5" or "1,3,5") into 0-based columns.
pub fn parse_prefix(s: &str, n: usize) -> Result<Vec<usize>, String> {
    s.split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
        .map(|w| match w.parse::<usize>() {
            Ok(c) if (1..=n).contains(&c) => Ok(c - 1),
            _ => Err(format!("'{w}' is not a column from 1 to {n}")),
        })
        .collect()
}

/// Parses `I/M`.
pub fn parse_shard(s: &str) -> Result<Shard, String> {
    s.parse().map_err(|e: nqueens::Error| e.to_string())
}

/// The range of `--checkpoint-every`: a tenth of a second (every save is an fsync) to a day.
const SAVE_EVERY_SECONDS: std::ops::RangeInclusive<f64> = 0.1..=86_400.0;

/// The range of `estimate --seconds`: none (the least sample) to a day.
const SAMPLE_SECONDS: std::ops::RangeInclusive<f64> = 0.0..=86_400.0;

/// A parser of a number of seconds within `range` whose refusal states the range.
fn seconds(
    range: std::ops::RangeInclusive<f64>,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    move |s: &str| match s.trim().parse::<f64>() {
        Ok(v) if range.contains(&v) => Ok(v),
        _ => Err(format!(
            "must be a number of seconds from {} to {}",
            range.start(),
            range.end()
        )),
    }
}

/// The environment variable `name` as the process has it: what every command hands the
/// library, which reads each variable by one rule (set to nothing or spaces, as if unset).
pub fn var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}
