import Dispatch
import Synchronization

/// Runs async code to its end on the calling thread, which waits for it: how SQLite's synchronous, queue-bound
/// connections (GRDB) serve the async storage port. Inside GRDB's write closure the transaction's body runs here,
/// on the writer's thread, so every statement is a direct call (no hop per statement); the body's own awaits on
/// other executors come back here when they resume.
///
/// Never used on a thread that the awaited work needs (an event loop, a GRDB queue the body waits on): that
/// would wait forever, as a synchronous call on it would.
final class CallingThreadExecutor: TaskExecutor, @unchecked Sendable {
    /// Jobs enqueued and not run yet, oldest first (enqueued from any thread, run on the waiting one).
    private let jobs = Mutex<[UnownedJob]>([])
    /// Signalled once per job enqueued, and once when the body ends.
    private let ready = DispatchSemaphore(value: 0)

    private init() {}

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        ready.signal()
    }

    /// Runs `body` in a task whose executor is this thread, and returns (or throws) what it does.
    static func run<T: Sendable>(_ body: sending @escaping () async throws -> T) throws -> T {
        let executor = CallingThreadExecutor()
        let outcome = Mutex<Result<T, any Error>?>(nil)
        Task(executorPreference: executor) {
            let result: Result<T, any Error>
            do {
                result = .success(try await body())
            } catch {
                result = .failure(error)
            }
            outcome.withLock { $0 = result }
            executor.ready.signal()
        }
        while true {
            if let result = outcome.withLock({ $0 }) { return try result.get() }
            executor.ready.wait()
            while let job = executor.jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
                job.runSynchronously(on: executor.asUnownedTaskExecutor())
            }
        }
    }
}
