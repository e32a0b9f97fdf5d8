//! Capabilities a command loses before it runs.

use caps::{CapSet, Capability};

use crate::SandboxError;

/// The capabilities a root process could read Rein's memory with (found by
/// trying each one as root against a non-dumpable process), and those that
/// reach kernel memory.
const INSPECTION: [Capability; 7] = [
    Capability::CAP_SYS_PTRACE,
    Capability::CAP_SYS_ADMIN,
    Capability::CAP_PERFMON,
    Capability::CAP_BPF,
    Capability::CAP_SYS_RAWIO,
    Capability::CAP_SYS_MODULE,
    Capability::CAP_CHECKPOINT_RESTORE,
];

/// Drops [`INSPECTION`] from every set of this thread.
pub fn drop_inspection() -> Result<(), SandboxError> {
    for cap in INSPECTION {
        drop_capability(cap)?;
    }
    Ok(())
}

/// Removes `cap` from every set. The bounding set comes first (lowering it
/// needs `CAP_SETPCAP`, which a root process has); for root, `exec`
/// recomputes the permitted set from the bounding and inheritable sets, so
/// those two are what keep the program from getting it back. A capability
/// this kernel does not know is nobody's to use.
fn drop_capability(cap: Capability) -> Result<(), SandboxError> {
    if !caps::runtime::thread_all_supported().contains(&cap) {
        return Ok(());
    }
    let fail = |step: &'static str| {
        move |e: caps::errors::CapsError| SandboxError::Apply {
            step,
            reason: e.to_string(),
        }
    };
    let in_bounding = caps::has_cap(None, CapSet::Bounding, cap).map_err(fail("reading"))?;
    if in_bounding {
        let can_lower = caps::has_cap(None, CapSet::Effective, Capability::CAP_SETPCAP)
            .map_err(fail("reading"))?;
        if can_lower {
            caps::drop(None, CapSet::Bounding, cap).map_err(fail("bounding set"))?;
        } else if caps::has_cap(None, CapSet::Permitted, cap).map_err(fail("reading"))? {
            // It holds the capability and cannot give up the right to
            // regain it: refuse rather than run unconfined.
            return Err(SandboxError::Apply {
                step: "bounding set",
                reason: format!("{cap} is permitted but CAP_SETPCAP is not"),
            });
        }
    }
    // Lowering these needs no privilege. Ambient first: it may only hold
    // what is permitted and inheritable.
    if caps::runtime::ambient_set_supported().is_ok() {
        caps::drop(None, CapSet::Ambient, cap).map_err(fail("ambient set"))?;
    }
    for (set, step) in [
        (CapSet::Inheritable, "inheritable set"),
        (CapSet::Effective, "effective set"),
        (CapSet::Permitted, "permitted set"),
    ] {
        caps::drop(None, set, cap).map_err(fail(step))?;
    }
    Ok(())
}
