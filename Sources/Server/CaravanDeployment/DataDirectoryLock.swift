package import CaravanCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The lock a server holds on its data directory (`caravan.lock`, an exclusive `flock` holding the server's pid),
/// so that a second server on the same directory is refused instead of sharing the SQLite file and sweeping the
/// storage files of the first. The kernel releases it when the process ends, however it ends (SIGKILL too).
package final class DataDirectoryLock: Sendable {
    private let descriptor: Int32

    /// Takes the lock of `directory` (which must exist).
    /// - Throws: `CaravanError(.invalidConfiguration)` naming the directory and the pid of the process holding it.
    package init(directory: String) throws {
        let path = (directory as NSString).appendingPathComponent("caravan.lock")
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw CaravanError(.invalidConfiguration, "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let holder = (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
            close(fd)
            throw CaravanError(.invalidConfiguration,
                               "the data directory \(directory) is in use by another caravan server (pid \(holder.flatMap { $0.isEmpty ? nil : $0 } ?? "unknown"))",
                               hint: "stop that server, or give this one another --data-dir")
        }
        let pid = "\(getpid())\n"
        _ = ftruncate(fd, 0)
        _ = pid.withCString { pwrite(fd, $0, strlen($0), 0) }
        descriptor = fd
    }

    /// Releases the lock (the file stays; a stale pid in it means nothing without the lock).
    deinit {
        close(descriptor)
    }
}
