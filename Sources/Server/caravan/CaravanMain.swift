import CaravanCLI
import Foundation
import NIOCore
import NIOPosix
import GroupDecisions
import GroupDecisionsCommands
import LanguageExchange
import LanguageExchangeCommands
import Places
import PlacesCommands
import TransitCommands
import TravelLog
import TravelLogCommands

/// The process entry point. Before any task exists, NIO's event loops become Swift concurrency's global executor,
/// so request handlers run on the threads that do the I/O: no hop between the NIO and the concurrency thread pools,
/// and on a small machine half the threads competing for the cores.
@main
enum CaravanMain {
    static func main() {
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        Task {
            // The translation provider of LanguageExchange's `translate` (OpenAI-compatible), from the environment.
            let translation = OpenAICompatibleTranslator.configuration(environment: ProcessInfo.processInfo.environment)
            let languageExchange = LanguageExchangeModule.make(translator: translation.map(OpenAICompatibleTranslator.init(configuration:)))
            await CaravanCommandLine.main(apps: [PlacesModule.module, TravelLogModule.module, GroupDecisionsModule.module, languageExchange],
                                          commands: [PlacesCommands.commands, TravelLogCommands.commands, GroupDecisionsCommands.commands,
                                                     TransitCommands.commands, LanguageExchangeCommands.commands])
        }
        dispatchMain()
    }
}
