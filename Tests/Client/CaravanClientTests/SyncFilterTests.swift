import CaravanClient
import Testing

/// Sync filters (shapes) as `caravan-client sync --filter` and `SyncEngine.sync(tables:filters:)` take them.
@Suite struct SyncFilterTests {
    @Test func aFilterIsTheTablesParameterAndItsRESTValue() throws {
        let filter = try SyncFilter("places.area_id=eq.olaya")
        #expect(filter.parameter == "places.area_id" && filter.value == "eq.olaya")
        let logic = try SyncFilter(table: "places", "or=(a.eq.1,b.eq.x=y)")
        #expect(logic.parameter == "places.or" && logic.value == "(a.eq.1,b.eq.x=y)")
    }

    @Test(arguments: ["places", "area_id=eq.olaya", ".area_id=eq.x", "places.=eq.x"])
    func malformedFiltersAreRefused(_ text: String) {
        #expect(throws: (any Error).self) { try SyncFilter(text) }
    }
}
