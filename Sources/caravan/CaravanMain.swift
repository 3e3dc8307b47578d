import CaravanCLI
import Foundation
import NIOCore
import NIOPosix
import GroupDecisions
import GroupDecisionsCommands
import Places
import PlacesCommands
import TravelLog
import TransitCommands
import TravelLogCommands

/// The process entry point. Before any task exists, NIO's event loops become Swift concurrency's global executor,
/// so request handlers run on the threads that do the I/O: no hop between the NIO and the concurrency thread pools,
/// and on a small machine half the threads competing for the cores.
@main
enum CaravanMain {
    static func main() {
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        Task {
            await CaravanCommandLine.main(apps: [PlacesModule.module, TravelLogModule.module, GroupDecisionsModule.module],
                                          commands: [PlacesCommands.commands, TravelLogCommands.commands, GroupDecisionsCommands.commands, TransitCommands.commands])
        }
        dispatchMain()
    }
}
