public import CaravanCore

/// An app module's test fixture on either engine: a fresh store migrated with the platform's system tables and the
/// modules' frozen migrations, their catalog, and the write pipeline — everything `ModuleFixture` needs to act as
/// the service role or a user, call RPCs and run a `PolicyMatrix`.
///
/// ```swift
/// @Test(arguments: Engine.allCases)
/// func ownersSeeOnlyTheirNotes(engine: Engine) async throws {
///     let f = try await AppFixture(engine: engine, modules: [NotesModule.module])
///     …
/// }
/// ```
public struct AppFixture: ModuleFixture {
    public let store: any Store
    public let catalog: Catalog
    public let pipeline: WritePipeline

    public init(engine: Engine, modules: [AppModule]) async throws {
        catalog = try Catalog.validated(modules: [SystemModule.module] + modules)
        store = try await engine.makeStore(migrations: catalog.migrations)
        pipeline = WritePipeline(store: store, publisher: ChangePublisher())
    }
}
