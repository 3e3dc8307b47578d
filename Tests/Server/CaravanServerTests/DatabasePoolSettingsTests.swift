import CaravanCore
import CaravanDeployment
import CaravanPostgres
import CaravanServer
import Logging
import Testing

/// The PostgreSQL pool is sized from configuration, refused when out of range, and carried into the
/// deployment's store configuration and its start log.
@Suite("PostgreSQL pool settings")
struct DatabasePoolSettingsTests {
    @Test func defaultsAreTwentyConnectionsAndTenSeconds() throws {
        let configuration = try ServerConfiguration.resolve(flags: [:], environment: [:], file: [:])
        #expect(configuration.databasePool.size == 20 && configuration.databasePool.acquireTimeout == .seconds(10))
        #expect(configuration.databasePool.preparedStatements)
        let off = try ServerConfiguration.resolve(flags: [:], environment: ["CARAVAN_DB_PREPARED_STATEMENTS": "false"], file: [:])
        #expect(!off.databasePool.preparedStatements)
    }

    @Test func theEnvironmentOverridesTheFile() throws {
        let configuration = try ServerConfiguration.resolve(flags: [:], environment: ["CARAVAN_DB_POOL_SIZE": "48"],
                                                            file: ["db_pool_size": "8", "db_pool_acquire_timeout": "2m"])
        #expect(configuration.databasePool.size == 48 && configuration.databasePool.acquireTimeout == .seconds(120))
    }

    @Test(arguments: [("db_pool_size", "0"), ("db_pool_size", "many"), ("db_pool_size", "1001"), ("db_pool_acquire_timeout", "0s"), ("db_pool_acquire_timeout", "soon"),
                            ("db_prepared_statements", "yes")])
    func badValuesAreRefusedNamingTheKey(key: String, value: String) {
        #expect(throws: CaravanError.self) { try ServerConfiguration.resolve(flags: [:], environment: [:], file: [key: value]) }
        do {
            _ = try ServerConfiguration.resolve(flags: [:], environment: [:], file: [key: value])
        } catch {
            #expect(error.code == .invalidValue && error.message.hasPrefix(key))
        }
    }

    @Test func theDeploymentsPoolIsSizedAndLogged() throws {
        let location = try DeploymentLocation.resolve(dataDirectory: "unused", databaseURL: "postgres://caravan@127.0.0.1:5432/app",
                                                      poolSize: 7, acquireTimeout: .seconds(3))
        guard case .database(let database) = location else { Issue.record("not a database location"); return }
        #expect(database.maximumConnections == 7 && database.connectionAcquireTimeout == .seconds(3))
        #expect(location.logMetadata["database.pool_size"]?.description == "7")
        #expect(location.logMetadata["database.pool_acquire_timeout"]?.description == "3.0 seconds")
        #expect(database.minimumConnections == 0 && database.preparesStatements)
        // A server keeps its whole pool open; prepared statements can be turned off.
        let served = try DeploymentLocation.resolve(dataDirectory: "unused", databaseURL: "postgres://caravan@127.0.0.1:5432/app", poolSize: 7,
                                                    warm: true, preparedStatements: false)
        guard case .database(let warm) = served else { Issue.record("not a database location"); return }
        #expect(warm.minimumConnections == 7 && !warm.preparesStatements)
        #expect(served.logMetadata["database.pool_warm"]?.description == "true")
        #expect(served.logMetadata["database.prepared_statements"]?.description == "false")
        guard case .directory = try DeploymentLocation.resolve(dataDirectory: "d", databaseURL: nil, poolSize: 7) else {
            Issue.record("a data directory without a database URL"); return
        }
    }

    @Test func readReplicasComeFromTheEnvironmentCommaSeparatedWithTheirBounds() throws {
        let configuration = try ServerConfiguration.resolve(
            flags: [:], environment: ["CARAVAN_READ_REPLICAS": "postgres://caravan@standby-1/app, postgres://caravan@standby-2:5433/app"],
            file: ["read_replica_max_lag": "2s", "read_replica_token_wait": "150ms", "read_replica_check_interval": "1m"])
        #expect(configuration.databasePool.readReplicas == ["postgres://caravan@standby-1/app", "postgres://caravan@standby-2:5433/app"])
        #expect(configuration.databasePool.readReplicaSettings.maxLag == .seconds(2))
        #expect(configuration.databasePool.readReplicaSettings.tokenWait == .milliseconds(150))
        #expect(configuration.databasePool.readReplicaSettings.checkInterval == .seconds(60))
        let location = try DeploymentLocation.resolve(dataDirectory: "unused", databaseURL: "postgres://caravan@primary/app", poolSize: 7,
                                                      readReplicas: configuration.databasePool.readReplicas,
                                                      readReplicaSettings: configuration.databasePool.readReplicaSettings)
        guard case .database(let database) = location else { Issue.record("not a database location"); return }
        #expect(database.readReplicas.map { "\($0.host):\($0.port)" } == ["standby-1:5432", "standby-2:5433"])
        #expect(database.readReplicas.allSatisfy { $0.maximumConnections == 7 && $0.connectionAcquireTimeout == .seconds(2) })
        #expect(database.readReplicaSettings.maxLag == .seconds(2))
        #expect(location.logMetadata["database.read_replicas"]?.description == "standby-1:5432/app,standby-2:5433/app")
        #expect(throws: CaravanError.self) {
            try ServerConfiguration.resolve(flags: [:], environment: [:], file: ["read_replica_max_lag": "0s"])
        }
        #expect(configuration.databasePool.readReplicaConsistency == .caller)
        let strong = try ServerConfiguration.resolve(flags: [:], environment: ["CARAVAN_READ_REPLICA_CONSISTENCY": "strong"], file: [:])
        #expect(strong.databasePool.readReplicaConsistency == .strong)
        #expect(throws: CaravanError.self) {
            try ServerConfiguration.resolve(flags: [:], environment: [:], file: ["read_replica_consistency": "session"])
        }
    }

    @Test func aTransactionPoolerTurnsPreparedStatementsOffAndNeedsADirectListenURL() throws {
        let configuration = try ServerConfiguration.resolve(
            flags: ["listen_url": "postgres://caravan@db-direct:5432/app"], environment: ["CARAVAN_DB_POOLER": "transaction"], file: [:])
        #expect(configuration.databasePool.pooler == .transaction && !configuration.databasePool.preparedStatements)
        let location = try DeploymentLocation.resolve(dataDirectory: "unused", databaseURL: "postgres://caravan@pgbouncer:6432/app",
                                                      preparedStatements: configuration.databasePool.preparedStatements,
                                                      listenURL: configuration.databasePool.listenURL)
        guard case .database(let database) = location else { Issue.record("not a database location"); return }
        #expect(database.listenConfiguration.map { "\($0.host):\($0.port)/\($0.database)" } == "db-direct:5432/app")
        #expect(database.host == "pgbouncer" && !database.preparesStatements)
        #expect(location.logMetadata["database.listen"]?.description == "db-direct:5432/app")
        // Without a direct URL for LISTEN, or with prepared statements asked for, a transaction pooler is refused.
        for file in [["db_pooler": "transaction"], ["db_pooler": "transaction", "listen_url": "postgres://caravan@db/app", "db_prepared_statements": "true"]] {
            let error = #expect(throws: CaravanError.self) { try ServerConfiguration.resolve(flags: [:], environment: [:], file: file) }
            #expect(error?.code == .invalidConfiguration)
        }
        #expect(throws: CaravanError.self) { try ServerConfiguration.resolve(flags: [:], environment: [:], file: ["db_pooler": "session"]) }
        #expect(throws: CaravanError.self) { try DeploymentLocation.resolve(dataDirectory: "d", databaseURL: nil, listenURL: "postgres://caravan@db/app") }
    }

    @Test func readReplicasAreRefusedOnSQLite() {
        let error = #expect(throws: CaravanError.self) {
            try DeploymentLocation.resolve(dataDirectory: "d", databaseURL: nil, readReplicas: ["postgres://caravan@standby/app"])
        }
        #expect(error?.code == .invalidConfiguration && error?.message.contains("PostgreSQL") == true)
    }
}
