//! What this process may allocate: the machine's memory and the ceilings the system sets on
//! the process (its address-space limit, `ulimit -v`, and its cgroup's memory limit; read on
//! Linux, absent elsewhere). The worker threads and the quadrant engine's tables are sized
//! from it, so that no allocation fails past them: a failed allocation ends the process.

/// Address space a worker thread takes before any work: the malloc arena glibc reserves for it
/// (64 MiB, reserved rather than used, but counted by `ulimit -v`) and its stack (2 MiB).
const PER_THREAD: u64 = 66 << 20;

/// The least address-space limit a run takes: every command ran from 28 MiB up in a probe
/// (below, a listing's plan of N = 20 no longer fits); under it a run is refused at once.
const LEAST_ADDRESS_SPACE: u64 = 32 << 20;

/// The table budget where the system says nothing of its memory.
const UNKNOWN_MACHINE_BUDGET: u64 = 2 << 30;

/// A size in bytes as messages show it: in the largest binary unit that keeps it at 1 or more,
/// rounded up (`12 MiB`), or with the precision asked for (`{:.1}`: `12.3 MiB`); `{:#}` leaves
/// out the space, for `key=value` fields (`12.3MiB`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Bytes(pub u64);

impl std::fmt::Display for Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
        let power = (self.0.max(1).ilog2() / 10).min(4);
        let unit = 1u64 << (10 * power);
        let space = if f.alternate() { "" } else { " " };
        let name = if self.0 == 1 {
            "byte"
        } else {
            UNITS[power as usize]
        };
        match f.precision() {
            Some(decimals) => {
                let value = self.0 as f64 / unit as f64;
                write!(f, "{value:.decimals$}{space}{name}")
            }
            None => write!(f, "{}{space}{name}", self.0.div_ceil(unit)),
        }
    }
}

/// The room the process has, read once per run.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Room {
    machine: Option<u64>,
    /// The address-space limit (`ulimit -v`).
    address_space: Option<u64>,
    /// The address-space limit less what the process has mapped already.
    address_space_left: Option<u64>,
    cgroup: Option<u64>,
}

impl Room {
    /// The room as the system states it now.
    pub(crate) fn now() -> Room {
        let read = |path: &str| std::fs::read_to_string(path).ok();
        let field = |text: &str, name: &str, at: usize| -> Option<u64> {
            let line = text.lines().find(|l| l.starts_with(name))?;
            line.split_whitespace().nth(at)?.parse().ok()
        };
        let machine = read("/proc/meminfo").and_then(|m| field(&m, "MemTotal:", 1));
        // "unlimited" does not parse: no limit
        let limit = read("/proc/self/limits").and_then(|l| field(&l, "Max address space", 3));
        // cgroup v2, then v1 (which says "no limit" with a number near 2^63)
        let cgroup = [
            "/sys/fs/cgroup/memory.max",
            "/sys/fs/cgroup/memory/memory.limit_in_bytes",
        ]
        .into_iter()
        .find_map(|path| read(path)?.trim().parse::<u64>().ok())
        .filter(|&bytes| bytes < 1 << 62);
        Room {
            machine: machine.map(|kib| kib * 1024),
            address_space: limit,
            address_space_left: limit.map(|bytes| bytes.saturating_sub(mapped().unwrap_or(0))),
            cgroup,
        }
    }

    /// Refuses an address-space limit too small for any run, before anything is built.
    pub(crate) fn check(&self) -> Result<(), crate::error::Error> {
        match self.address_space {
            Some(limit) if limit < LEAST_ADDRESS_SPACE => Err(crate::error::Error::Failed(format!(
                "the address-space limit (ulimit -v) of {} KiB is below the {} a run needs: raise it",
                limit >> 10,
                Bytes(LEAST_ADDRESS_SPACE)
            ))),
            _ => Ok(()),
        }
    }

    /// How many of `asked` worker threads fit: those whose address space takes at most half
    /// of what the address-space limit leaves, and at least one.
    pub(crate) fn threads(&self, asked: usize) -> usize {
        threads_within(asked, self.address_space_left)
    }

    /// What the tables may take beside `threads` workers, now: `asked` (`--memory-limit`)
    /// held to half of what the process's ceilings leave; by default half the least of that
    /// and the machine's memory (2 GiB where the system says nothing).
    pub(crate) fn tables(&self, asked: Option<u64>, threads: usize) -> Budget {
        self.budget(asked, threads, self.address_space_left)
    }

    /// [`Room::tables`] from the limits as they are set, not from what the process has
    /// mapped at this moment (which varies from run to run): what a choice of plan reads, so
    /// that the same command always makes the same plan.
    pub(crate) fn tables_as_set(&self, asked: Option<u64>, threads: usize) -> Budget {
        let threads = threads_within(threads, self.address_space);
        self.budget(asked, threads, self.address_space)
    }

    fn budget(&self, asked: Option<u64>, threads: usize, address_space: Option<u64>) -> Budget {
        let threads_take = threads as u64 * PER_THREAD;
        let ceiling = [
            address_space.map(|room| (room.saturating_sub(threads_take), SetBy::AddressSpace)),
            self.cgroup.map(|bytes| (bytes, SetBy::Cgroup)),
        ]
        .into_iter()
        .flatten()
        .min();
        let half = |(bytes, by): (u64, SetBy)| Budget {
            bytes: bytes / 2,
            set_by: by,
        };
        match asked {
            Some(bytes) => match ceiling.map(half) {
                Some(held) if held.bytes < bytes => held,
                _ => Budget::asked(bytes),
            },
            None => [self.machine.map(|bytes| (bytes, SetBy::Machine)), ceiling]
                .into_iter()
                .flatten()
                .min()
                .map_or(
                    Budget {
                        bytes: UNKNOWN_MACHINE_BUDGET,
                        set_by: SetBy::Unknown,
                    },
                    half,
                ),
        }
    }

    /// The address-space limit's room, for messages (`None`: no limit).
    pub(crate) fn address_space_left(&self) -> Option<u64> {
        self.address_space_left
    }
}

/// What the address-space limit (`ulimit -v`) leaves the process at this moment (`None`: no
/// limit): for what is mapped outside Rust's allocator, as a GPU driver maps its memory. The
/// limit is read once per process, what is mapped at each call.
#[cfg(feature = "gpu")]
pub(crate) fn address_space_left_now() -> Option<u64> {
    static LIMIT: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    let limit = (*LIMIT.get_or_init(|| Room::now().address_space))?;
    Some(limit.saturating_sub(mapped().unwrap_or(0)))
}

/// Bytes of address space the process has mapped (`VmSize`), where the system says.
fn mapped() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmSize:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// How many of `asked` threads take at most half of `room` bytes of address space (all of
/// them without a limit), and at least one.
fn threads_within(asked: usize, room: Option<u64>) -> usize {
    match room {
        Some(room) => asked.min((room / 2 / PER_THREAD).max(1) as usize),
        None => asked,
    }
}

/// Bytes the quadrant engine's tables may take, and what set that.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Budget {
    pub bytes: u64,
    pub set_by: SetBy,
}

impl Budget {
    /// `bytes`, as asked for (`--memory-limit`).
    pub(crate) fn asked(bytes: u64) -> Budget {
        Budget {
            bytes,
            set_by: SetBy::Asked,
        }
    }

    /// What the notes say of it: `the memory limit of 1 GiB`, `the 12 MiB this process's
    /// address-space limit (ulimit -v) leaves them`.
    pub(crate) fn describe(self) -> String {
        let bytes = Bytes(self.bytes);
        match self.set_by {
            SetBy::Asked => format!("the memory limit of {bytes}"),
            SetBy::AddressSpace => format!(
                "the {bytes} this process's address-space limit (ulimit -v) leaves them beside its threads"
            ),
            SetBy::Cgroup => format!("the {bytes} this process's cgroup memory limit leaves them"),
            SetBy::Machine => format!("the {bytes} of half the machine's memory"),
            SetBy::Unknown => format!("the default budget of {bytes}"),
        }
    }
}

/// What set a [`Budget`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum SetBy {
    /// `--memory-limit`.
    Asked,
    /// Half of what the address-space limit (`ulimit -v`) leaves beside the threads.
    AddressSpace,
    /// Half the cgroup's memory limit.
    Cgroup,
    /// Half the machine's memory.
    Machine,
    /// Nothing the system says: a default.
    Unknown,
}

/// The failure of a run whose memory ran short past what it was sized for (an allocation
/// that the system refused): one line saying what to change.
pub(crate) fn memory_short(what: &str) -> crate::error::Error {
    crate::error::Error::Failed(format!(
        "memory ran short for {what}: allow the process more (ulimit -v, the cgroup's limit), or count on fewer threads or in smaller shards"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn room(left: Option<u64>, cgroup: Option<u64>) -> Room {
        Room {
            machine: Some(8192 * MIB),
            address_space: left.map(|l| l + 10 * MIB),
            address_space_left: left,
            cgroup,
        }
    }

    #[test]
    fn sizes_are_shown_in_their_largest_unit() {
        assert_eq!(Bytes(512).to_string(), "512 bytes");
        assert_eq!(Bytes(1).to_string(), "1 byte");
        assert_eq!(Bytes(32 << 20).to_string(), "32 MiB");
        assert_eq!(Bytes((4 << 20) + 1).to_string(), "5 MiB");
        assert_eq!(format!("{:.1}", Bytes(3 << 29)), "1.5 GiB");
        assert_eq!(format!("{:#.1}", Bytes(12_897_485)), "12.3MiB");
    }

    #[test]
    fn threads_take_at_most_half_the_address_space_left() {
        assert_eq!(room(None, None).threads(64), 64);
        assert_eq!(room(Some(390 * MIB), None).threads(16), 2);
        assert_eq!(room(Some(390 * MIB), None).threads(1), 1);
        assert_eq!(room(Some(40 * MIB), None).threads(8), 1);
        assert_eq!(room(None, Some(MIB)).threads(8), 8);
    }

    #[test]
    fn tables_get_half_of_what_the_threads_leave() {
        // no limits: half the machine, or what was asked
        let tables = |room: Room, asked, threads| {
            let budget = room.tables(asked, threads);
            (budget.bytes, budget.set_by)
        };
        assert_eq!(
            tables(room(None, None), None, 2),
            (4096 * MIB, SetBy::Machine)
        );
        assert_eq!(
            tables(room(None, None), Some(10_000 * MIB), 2),
            (10_000 * MIB, SetBy::Asked)
        );
        // 390 MiB of address space, 2 threads: (390 - 132) / 2
        let space = room(Some(390 * MIB), None);
        assert_eq!(tables(space, None, 2), (129 * MIB, SetBy::AddressSpace));
        assert_eq!(
            tables(space, Some(1 << 40), 2),
            (129 * MIB, SetBy::AddressSpace)
        );
        assert_eq!(tables(space, Some(MIB), 2), (MIB, SetBy::Asked));
        // a cgroup of 1 GiB: half of it
        assert_eq!(
            tables(room(None, Some(1024 * MIB)), None, 8),
            (512 * MIB, SetBy::Cgroup)
        );
        // threads that take all the address space leave nothing
        assert_eq!(tables(room(Some(50 * MIB), None), None, 1).0, 0);
    }

    /// The plan's budget reads the limit as set: what is mapped does not change it.
    #[test]
    fn the_budget_as_set_does_not_depend_on_what_is_mapped() {
        let mapped = |mib: u64| Room {
            machine: Some(8192 * MIB),
            address_space: Some(400 * MIB),
            address_space_left: Some((400 - mib) * MIB),
            cgroup: None,
        };
        let as_set = mapped(10).tables_as_set(None, 2);
        assert_eq!(as_set, mapped(90).tables_as_set(None, 2));
        assert_eq!(as_set.bytes, (400 - 132) * MIB / 2);
        assert!(mapped(90).tables(None, 2).bytes < as_set.bytes);
    }
}
