package import CaravanCore
import Foundation

/// Frozen migrations of the places module, in `Sources/Apps/Places/Places/Migrations/<dialect>/<id>.sql`. Never edit a
/// shipped file; append new migrations (declared as `SchemaChange`s and frozen with `caravan migrations freeze`).
///
/// places-0001…0003 were written by hand before search, derived columns and `updated_at` could be declared:
/// 0001 creates the §3.1 tables (SQLite rendered from `PlacesSchema`) with triggers for `completeness_score` and
/// `updated_at`; 0002 builds SQLite's search objects (FTS5 with the `caravan_fold` tokenizer, trigrams, R*Tree) and
/// 0003 PostgreSQL's (tsvector, pg_trgm), both kept in step by triggers. A test checks that the migrated database
/// still matches the schema model. 0005 drops 0001's triggers: the pipeline keeps those columns now
/// (`PlacesBehaviours`).
package enum PlacesMigrations {
    package static let all: [Migration] = ["places-0001-create", "places-0002-search", "places-0003-search-postgres",
                                      "places-0004-search-plans"]
        .map { MigrationFiles(embedded: EmbeddedFiles.contents).migration($0, phase: .beforeUsersRename) }
        + [MigrationFiles(embedded: EmbeddedFiles.contents).migration("places-0005-derived-by-pipeline")]
}
