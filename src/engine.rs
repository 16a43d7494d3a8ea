//! The engines: the ways a count is cut up (the symmetry it uses, or none), as asked for and
//! as run. At the bottom of the crate: plans, errors, checkpoints and reports name them.

/// Which symmetry decomposition to use, as asked for.
///
/// ```
/// use nqueens::{count, CountOptions, Engine, EngineChoice};
/// let mirror = CountOptions { engine: EngineChoice::Mirror, ..CountOptions::default() };
/// let c = count(12, &mirror).unwrap();
/// assert_eq!((c.total, c.engine), (14200, Engine::Mirror));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum EngineChoice {
    /// The fastest engine that applies.
    ///
    /// See [`crate::CountOptions::plan`] for the rule.
    #[default]
    Auto,
    /// First-row mirror halving.
    Mirror,
    /// Full 8-fold symmetry.
    D4,
    /// Quadrant meet-in-the-middle (totals only, N up to 28).
    Quadrant,
}

/// The engine a plan actually uses; in JSON records and checkpoints, its [`Engine::name`].
///
/// ```
/// use nqueens::{count, CountOptions, Engine};
/// let c = count(12, &CountOptions::default()).unwrap();
/// assert_eq!(c.engine, Engine::D4);
/// assert_eq!(c.engine.to_string(), "d4");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// First-row mirror halving: a queen in the left half of row 1 counts twice.
    Mirror,
    /// Corner/edge decomposition over the eight symmetries of the square.
    D4,
    /// No symmetry: the completions of a user-given prefix.
    Plain,
    /// Quadrant meet-in-the-middle: half-board patterns paired by row sets, not a row search.
    Quadrant,
}

impl Engine {
    /// The name used in JSON, checkpoints and `--stats`.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Mirror => "mirror",
            Engine::D4 => "d4",
            Engine::Plain => "plain",
            Engine::Quadrant => "quadrant",
        }
    }

    /// The choice that rebuilds a plan of this engine.
    ///
    /// ```
    /// use nqueens::{Engine, EngineChoice};
    /// assert_eq!(Engine::D4.choice(), EngineChoice::D4);
    /// assert_eq!(Engine::Plain.choice(), EngineChoice::Auto);
    /// ```
    pub fn choice(self) -> EngineChoice {
        match self {
            Engine::Mirror => EngineChoice::Mirror,
            Engine::D4 => EngineChoice::D4,
            Engine::Plain => EngineChoice::Auto,
            Engine::Quadrant => EngineChoice::Quadrant,
        }
    }
}

impl std::fmt::Display for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl From<EngineChoice> for Engine {
    /// The engine a named choice asks for (`Auto` stands for the full-symmetry engine).
    fn from(choice: EngineChoice) -> Engine {
        match choice {
            EngineChoice::Mirror => Engine::Mirror,
            EngineChoice::Auto | EngineChoice::D4 => Engine::D4,
            EngineChoice::Quadrant => Engine::Quadrant,
        }
    }
}

/// The smallest N the full-symmetry decomposition covers; below it, mirror halving runs.
///
/// A bound: [`EngineChoice::D4`] below it is refused (see [`crate::Error::EngineTooSmall`]).
pub const D4_MIN_N: usize = 4;
