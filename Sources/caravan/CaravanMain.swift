import CaravanCLI
import Foundation
import NIOCore
import NIOPosix
import GroupDecisions
import LanguageExchange
import Places
import TravelLog

/// The process entry point. Before any task exists, NIO's event loops become Swift concurrency's global executor,
/// so request handlers run on the threads that do the I/O: no hop between the NIO and the concurrency thread pools,
/// and on a small machine half the threads competing for the cores.
@main
enum CaravanMain {
    static func main() {
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        Task {
            // LanguageExchange is served on request (`--apps language_exchange,…`): its `profiles` table and
            // GroupDecisions' have the same name, so the two cannot share a deployment.
            let defaults = [PlacesModule.module, TravelLogModule.module, GroupDecisionsModule.module]
            let translation = OpenAICompatibleTranslator.configuration(environment: ProcessInfo.processInfo.environment)
            let languageExchange = LanguageExchangeModule.make(translator: translation.map(OpenAICompatibleTranslator.init(configuration:)))
            await CaravanCommandLine.main(apps: defaults + [languageExchange], defaultApps: defaults.map(\.name))
        }
        dispatchMain()
    }
}
