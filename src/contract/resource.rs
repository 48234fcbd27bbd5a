//! Resources of this host that can run out: when one does, a check says so instead of
//! blaming the target.
//!
//! A socket, pipe or file that cannot be opened for want of descriptors, a thread or process
//! that cannot be started, memory the kernel refuses: none of these says anything about the
//! server. Every layer that opens or starts something maps the operating system's error
//! through here, and the check is UNKNOWN with `local_resource` evidence (never UNREACHABLE,
//! never MISCONFIGURED).

use nix::errno::Errno;

/// A local resource that ran out (the `local_resource` evidence word).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LocalResource {
    /// The process's or the system's file descriptors (`EMFILE`, `ENFILE`): `ulimit -n`.
    FileDescriptors,
    /// Threads or processes (`EAGAIN` when starting one): `ulimit -u`, the system's limits.
    Threads,
    /// Memory or address space (`ENOMEM`, `ENOBUFS`): `ulimit -v`, the system's memory.
    Memory,
    /// The disk: a volume this run writes (a token file's) is full, over quota or failing
    /// (`ENOSPC`, `EDQUOT`, `EIO`).
    Disk,
}

impl LocalResource {
    /// The evidence word.
    pub fn as_word(self) -> &'static str {
        match self {
            LocalResource::FileDescriptors => "file_descriptors",
            LocalResource::Threads => "threads",
            LocalResource::Memory => "memory",
            LocalResource::Disk => "disk",
        }
    }

    /// What ran out when opening a socket, pipe or file failed with `errno`, if that is
    /// what the error says.
    pub fn of_open(errno: i32) -> Option<LocalResource> {
        match Errno::from_raw(errno) {
            Errno::EMFILE | Errno::ENFILE => Some(LocalResource::FileDescriptors),
            Errno::ENOMEM | Errno::ENOBUFS => Some(LocalResource::Memory),
            _ => None,
        }
    }

    /// What ran out when starting a process or thread failed with `errno` (which also opens
    /// pipes): as [`LocalResource::of_open`], and `EAGAIN` is the thread or process limit.
    pub fn of_start(errno: i32) -> Option<LocalResource> {
        match Errno::from_raw(errno) {
            Errno::EAGAIN => Some(LocalResource::Threads),
            _ => LocalResource::of_open(errno),
        }
    }

    /// [`LocalResource::of_start`] for an I/O error.
    pub fn of_start_error(e: &std::io::Error) -> Option<LocalResource> {
        e.raw_os_error().and_then(LocalResource::of_start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errnos_name_the_resource() {
        let r = |e: Errno| e as i32;
        assert_eq!(
            LocalResource::of_open(r(Errno::EMFILE)),
            Some(LocalResource::FileDescriptors)
        );
        assert_eq!(
            LocalResource::of_open(r(Errno::ENFILE)),
            Some(LocalResource::FileDescriptors)
        );
        assert_eq!(
            LocalResource::of_open(r(Errno::ENOBUFS)),
            Some(LocalResource::Memory)
        );
        assert_eq!(
            LocalResource::of_open(r(Errno::EAGAIN)),
            None,
            "a read would block"
        );
        assert_eq!(
            LocalResource::of_start(r(Errno::EAGAIN)),
            Some(LocalResource::Threads)
        );
        assert_eq!(LocalResource::of_start(r(Errno::ECONNREFUSED)), None);
        let e = std::io::Error::from_raw_os_error(r(Errno::EMFILE));
        assert_eq!(
            LocalResource::of_start_error(&e).map(LocalResource::as_word),
            Some("file_descriptors")
        );
    }
}
