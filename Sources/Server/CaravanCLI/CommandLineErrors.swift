import ArgumentParser
import CaravanCore
import CaravanDeployment
import Foundation
import NIOCore

/// The one place where an error that ends a command becomes what the user reads: one line, `caravan: WHAT (HINT)`,
/// never a type dump. The command line's own errors (a bad flag, `--help`, `--version`) are ArgumentParser's to print.
enum CommandLineErrors {
    /// Runs the command of `arguments` (the process's by default) and exits with its status.
    static func main() async -> Never {
        do {
            var command = try Caravan.parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            exit(0)
        } catch {
            guard let line = message(for: error) else { Caravan.exit(withError: error) }
            writeStandardError("caravan: \(line)\n")
            exit(1)
        }
    }

    /// The one-line message of an error, or nil for the command line's own errors (ArgumentParser prints those).
    static func message(for error: any Error) -> String? {
        switch error {
        case let error as CaravanError:
            return error.message + (error.hint.map { "; \($0)" } ?? "")
        case let error as DeploymentError:
            return "\(error.message) [\(error.code)]"  // the stable code, which scripts match on
        case let error as CocoaError:
            let path = (error.userInfo[NSFilePathErrorKey] as? String) ?? error.userInfo[NSURLErrorKey].map { "\($0)" }
            let cause = (error.userInfo[NSUnderlyingErrorKey] as? NSError).map { $0.localizedDescription } ?? error.localizedDescription
            return path.map { "\($0): \(cause)" } ?? cause
        case let error as POSIXError:
            return String(cString: strerror(error.code.rawValue))
        case let error as IOError:
            return "\(error.description)"
        case is ValidationError, is CleanExit, is ExitCode:
            return nil
        default:
            // ArgumentParser's internal errors (parse failures) are its to print; anything else is shown by its description.
            if String(reflecting: type(of: error)).hasPrefix("ArgumentParser.") { return nil }
            return String(describing: error)
        }
    }
}
