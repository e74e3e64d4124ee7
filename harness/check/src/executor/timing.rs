//! Where the time of a check goes: microseconds per [`Phase`], added up per subject. The
//! executor fills the phases of its checks; the campaign adds its own (generating the
//! program, the truth, gcc, triage) and writes them to `programs.csv`.

/// Where the time of a campaign goes, per program (microseconds of worker time).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    /// Generating the program.
    Generate,
    /// The front end and the reference interpreter (the truth).
    Reference,
    /// Lowering and the IR pass pipelines.
    Optimise,
    /// The IR interpreter on the optimised IR.
    Interpret,
    /// Instruction selection to assembly text.
    Backend,
    /// Assembling and linking.
    Link,
    /// qemu-arm runs.
    Qemu,
    /// The self-test oracles (data-flow agreement, the sampled encoder comparison).
    Selftest,
    /// gcc's third opinion.
    Gcc,
    /// Triage of new failures.
    Triage,
}

impl Phase {
    pub const ALL: [Phase; 10] = [
        Phase::Generate,
        Phase::Reference,
        Phase::Optimise,
        Phase::Interpret,
        Phase::Backend,
        Phase::Link,
        Phase::Qemu,
        Phase::Selftest,
        Phase::Gcc,
        Phase::Triage,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Phase::Generate => "generate",
            Phase::Reference => "reference",
            Phase::Optimise => "optimise",
            Phase::Interpret => "ir_interpreter",
            Phase::Backend => "back_end",
            Phase::Link => "link",
            Phase::Qemu => "qemu",
            Phase::Selftest => "selftest",
            Phase::Gcc => "gcc",
            Phase::Triage => "triage",
        }
    }
}

/// Microseconds per [`Phase`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timing(pub [u64; Phase::ALL.len()]);

impl Timing {
    pub fn add(&mut self, phase: Phase, d: std::time::Duration) {
        self.0[phase as usize] += d.as_micros() as u64;
    }

    /// Runs `f`, adding its time to `phase`.
    pub fn time<T>(&mut self, phase: Phase, f: impl FnOnce() -> T) -> T {
        let start = std::time::Instant::now();
        let out = f();
        self.add(phase, start.elapsed());
        out
    }

    pub fn get(&self, phase: Phase) -> u64 {
        self.0[phase as usize]
    }

    /// The time of `phase`.
    pub fn duration(&self, phase: Phase) -> std::time::Duration {
        std::time::Duration::from_micros(self.get(phase))
    }

    /// The time of every phase.
    pub fn total(&self) -> std::time::Duration {
        std::time::Duration::from_micros(self.0.iter().sum())
    }

    pub fn merge(&mut self, other: &Timing) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a += b;
        }
    }
}

