#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import NIOPosix

/// Makes a crash audible: on a fatal signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP) the process writes
/// one line to standard error, `caravan[PID]: fatal signal SIGSEGV (11); the process is ending`, then hands the signal
/// to the action that was installed before (Swift's crash backtracer, or the default action), so the process still
/// dies by that signal, with a core dump or a backtrace as before. A supervisor then sees the exit and restarts it
/// (README, "Running under a supervisor").
///
/// The handler is async-signal-safe: its lines are written ahead of time into memory allocated once, and it calls
/// only `write`, `sigaction` and `raise`. It runs on an alternate signal stack, so a stack overflow can still report:
/// on the main thread, and on the event-loop threads that run the request handlers (`installAlternateStacks`).
enum FatalSignalReporter {
    /// The signals reported, and their names.
    static let reported: [(signal: Int32, name: String)] = [
        (SIGSEGV, "SIGSEGV"), (SIGBUS, "SIGBUS"), (SIGILL, "SIGILL"), (SIGFPE, "SIGFPE"), (SIGABRT, "SIGABRT"), (SIGTRAP, "SIGTRAP"),
    ]

    /// One reported signal: its line and the action installed before ours.
    struct Slot {
        var line: UnsafeMutablePointer<UInt8>?
        var length: Int
        var previous: sigaction
    }

    /// Slots by signal number, written once by `install` before any handler is installed, then only read (and
    /// `previous` restored) by the handler. Never freed: the handler may run until the process ends.
    nonisolated(unsafe) static var slots: UnsafeMutablePointer<Slot>?
    static let slotCount = 65

    /// Bytes of each thread's alternate signal stack.
    static let alternateStackSize = 256 * 1024

    /// Installs the handler for every reported signal (once; later calls do nothing) with an alternate stack for the
    /// calling thread, and one for each thread of NIO's shared event-loop group, which runs the request handlers
    /// when it is the concurrency executor. `program` names the process in the line.
    static func install(program: String = "caravan") {
        guard slots == nil else { return }
        let table = UnsafeMutablePointer<Slot>.allocate(capacity: slotCount)
        table.initialize(repeating: Slot(line: nil, length: 0, previous: sigaction()), count: slotCount)
        let pid = getpid()
        for (signal, name) in reported {
            let text = Array("\(program)[\(pid)]: fatal signal \(name) (\(signal)); the process is ending\n".utf8)
            let line = UnsafeMutablePointer<UInt8>.allocate(capacity: text.count)
            line.initialize(from: text, count: text.count)
            table[Int(signal)].line = line
            table[Int(signal)].length = text.count
        }
        slots = table
        installAlternateStack()
        for (signal, _) in reported {
            var action = sigaction()
            action.__sigaction_handler.sa_sigaction = handler
            action.sa_flags = SA_SIGINFO | SA_ONSTACK
            sigemptyset(&action.sa_mask)
            _ = sigaction(signal, &action, &table[Int(signal)].previous)
        }
        installAlternateStacks(on: MultiThreadedEventLoopGroup.singleton)
    }

    /// Gives the calling thread an alternate signal stack when it has none (allocated once per thread, never freed:
    /// the thread may crash at any time).
    static func installAlternateStack() {
        var current = stack_t()
        guard sigaltstack(nil, &current) == 0, current.ss_flags & Int32(SS_DISABLE) != 0 else { return }
        var stack = stack_t()
        stack.ss_sp = UnsafeMutableRawPointer.allocate(byteCount: alternateStackSize, alignment: 16)
        stack.ss_size = alternateStackSize
        stack.ss_flags = 0
        _ = sigaltstack(&stack, nil)
    }

    /// An alternate signal stack for each thread of `group`.
    static func installAlternateStacks(on group: any EventLoopGroup) {
        for loop in group.makeIterator() {
            loop.execute { installAlternateStack() }
        }
    }

    /// The handler: the line, then the previous action. A fault (`si_code` > 0) happens again when the faulting
    /// instruction runs again, and reaches the previous action (the backtracer) with its own context. A signal this
    /// process raised (`abort`, `raise`) is raised again for the previous action, after this handler returns. A
    /// signal another process sent (`kill -SEGV`) gets the default action: the process ends by it (a backtracer would
    /// only report the kill, and return to a process that keeps running).
    static let handler: @convention(c) (Int32, UnsafeMutablePointer<siginfo_t>?, UnsafeMutableRawPointer?) -> Void = { signal, info, _ in
        guard let table = FatalSignalReporter.slots, signal > 0, Int(signal) < FatalSignalReporter.slotCount else { return }
        if let line = table[Int(signal)].line {
            _ = write(2, line, table[Int(signal)].length)
        }
        guard let info else {
            _ = sigaction(signal, &table[Int(signal)].previous, nil)
            _ = raise(signal)
            return
        }
        if info.pointee.si_code > 0 {
            _ = sigaction(signal, &table[Int(signal)].previous, nil)
            return
        }
        if info.pointee._sifields._kill.si_pid == getpid() {
            _ = sigaction(signal, &table[Int(signal)].previous, nil)
        } else {
            var fallback = sigaction()
            fallback.__sigaction_handler.sa_handler = SIG_DFL
            sigemptyset(&fallback.sa_mask)
            _ = sigaction(signal, &fallback, nil)
        }
        _ = raise(signal)
    }
}
