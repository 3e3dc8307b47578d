import ArgumentParser

struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply live changes of a table from realtime and print each, one JSON line.")
    @OptionGroup var options: ClientOptions
    @Argument var table: String

    func run() async throws {
        throw ValidationError("watch needs the realtime client, which this build does not have yet")
    }
}
