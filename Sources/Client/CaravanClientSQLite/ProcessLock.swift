import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive lock on a file (`flock`), held by one holder at a time: across processes, and across holders in one
/// process too (each `tryAcquire` opens the file anew, and `flock` locks belong to the open file). The kernel lets it go
/// when its holder's process ends, a crash included, so a killed holder never leaves it stuck.
package final class ProcessLock: Sendable {
    private let descriptor = Mutex<Int32?>(nil)

    private init(_ descriptor: Int32) {
        self.descriptor.withLock { $0 = descriptor }
    }

    /// Takes the lock on `path` (the file is made, 0600, when missing), or nil when another holder has it.
    package static func tryAcquire(_ path: String) throws(LocalStorageError) -> ProcessLock? {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .fileFailure("cannot open the lock file \(path): \(String(cString: strerror(errno)))") }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let error = errno
            close(descriptor)
            if error == EWOULDBLOCK || error == EAGAIN { return nil }
            throw .fileFailure("cannot lock \(path): \(String(cString: strerror(error)))")
        }
        return ProcessLock(descriptor)
    }

    /// Lets the lock go (once; later calls do nothing).
    package func release() {
        guard let descriptor = descriptor.withLock({ value in defer { value = nil }; return value }) else { return }
        _ = flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    deinit { release() }
}
