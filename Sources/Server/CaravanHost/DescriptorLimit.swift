#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's limit on open file descriptors (`RLIMIT_NOFILE`).
package enum DescriptorLimit {
    /// Raises the soft limit to the hard one (at most 1,048,576) and returns the soft limit now in force; nil when
    /// the limit cannot be read.
    package static func raiseSoftLimit() -> Int? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        let target = min(limit.rlim_max, rlim_t(1 << 20))
        if limit.rlim_cur < target {
            var raised = limit
            raised.rlim_cur = target
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return Int(min(limit.rlim_cur, rlim_t(1 << 20)))
    }
}
