@testable import CaravanPostgres
import Testing

/// Frozen scripts are split into statements for the extended protocol: only a semicolon outside quotes, quoted
/// identifiers, dollar-quoted bodies and comments ends one.
@Suite struct PostgresScriptTests {
    @Test func semicolonsInsideQuotesIdentifiersBodiesAndCommentsDoNotSplit() {
        let script = """
            -- a leading comment; not a statement
            CREATE TABLE "a;b" ("x" text DEFAULT 'it''s; fine');
            CREATE FUNCTION f() RETURNS int AS $body$ BEGIN RETURN 1; END; $body$ LANGUAGE plpgsql;
            SELECT 1 -- trailing; comment
            ;
            SELECT $1::text, 'a$b;'
            """
        #expect(PostgresScript.statements(script) == [
            "-- a leading comment; not a statement\nCREATE TABLE \"a;b\" (\"x\" text DEFAULT 'it''s; fine')",
            "CREATE FUNCTION f() RETURNS int AS $body$ BEGIN RETURN 1; END; $body$ LANGUAGE plpgsql",
            "SELECT 1 -- trailing; comment",
            "SELECT $1::text, 'a$b;'",
        ])
    }

    @Test func emptyAndCommentOnlyPiecesAreDropped() {
        #expect(PostgresScript.statements(";;\n-- only a comment\n;  ") == [])
        #expect(PostgresScript.statements("SELECT 'unterminated") == ["SELECT 'unterminated"])
    }
}
