import Foundation
import GRDB
import Synchronization
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

/// A downloaded image with what HTTP caching needs to reuse it: until `expiresAt` it is used
/// as is; after, it is revalidated with its validators (`If-None-Match`, `If-Modified-Since`).
struct CachedTile: Sendable, Equatable {
    var body: [UInt8]
    var etag: String?
    var lastModified: String?
    var expiresAt: Date

    func isFresh(at now: Date) -> Bool { now < expiresAt }
    var canRevalidate: Bool { etag != nil || lastModified != nil }
}

/// The first cache level: the tiles this process used last, bounded by count (LRU).
final class TileMemoryCache: Sendable {
    private struct State {
        var entries: [String: CachedTile] = [:]
        var order: [String] = []   // least recently used first
    }

    private let state = Mutex(State())
    let capacity: Int

    /// 256 tiles ≈ 5 MB of OSM PNGs: a few maps' worth, enough for a watch loop logging nearby.
    init(capacity: Int = 256) { self.capacity = max(1, capacity) }

    func get(_ key: String) -> CachedTile? {
        state.withLock { state in
            guard let tile = state.entries[key] else { return nil }
            if let index = state.order.firstIndex(of: key) { state.order.remove(at: index) }
            state.order.append(key)
            return tile
        }
    }

    func put(_ key: String, _ tile: CachedTile) {
        state.withLock { state in
            if state.entries.updateValue(tile, forKey: key) != nil, let index = state.order.firstIndex(of: key) {
                state.order.remove(at: index)
            }
            state.order.append(key)
            while state.order.count > capacity {
                state.entries.removeValue(forKey: state.order.removeFirst())
            }
        }
    }

    var count: Int { state.withLock { $0.entries.count } }
}

/// The second cache level: tiles in their own SQLite file (never the outbox: a cache may be
/// deleted at any time), shared by every enlog process, its tile bytes bounded by `maxBytes`
/// with the least recently used evicted first.
///
/// A cache that cannot be opened or written turns itself off with one warning: maps are then
/// made from memory and the network, never failed because of the cache.
final class TileDiskCache: Sendable {
    let path: String
    let maxBytes: Int
    private let warn: @Sendable (String) -> Void
    private let state = Mutex<State>(.unopened)

    private enum State {
        case unopened
        case open(DatabasePool)
        case off
    }

    init(path: String, maxBytes: Int, warn: @escaping @Sendable (String) -> Void) {
        self.path = path
        self.maxBytes = max(0, maxBytes)
        self.warn = warn
    }

    /// Tiles found for `keys`, each marked as used now (one transaction for the whole map).
    func lookup(_ keys: [String], now: Date) -> [String: CachedTile] {
        guard !keys.isEmpty else { return [:] }
        return use("read") { pool in
            try pool.write { db in
                // One statement for the whole map, not one per tile.
                let marks = Array(repeating: "?", count: keys.count).joined(separator: ",")
                var found: [String: CachedTile] = [:]
                var uses: [(key: String, lastUsedAt: Double)] = []
                for row in try Row.fetchAll(db, sql: """
                    SELECT key, body, etag, lastModified, expiresAt, lastUsedAt FROM tile WHERE key IN (\(marks))
                    """, arguments: StatementArguments(keys)) {
                    let body: Data = row["body"], key: String = row["key"]
                    found[key] = CachedTile(body: [UInt8](body), etag: row["etag"], lastModified: row["lastModified"],
                                            expiresAt: Date(timeIntervalSince1970: row["expiresAt"]))
                    uses.append((key, row["lastUsedAt"]))
                }
                try Self.markUsed(db, "tile", uses, now: now)
                return found
            }
        } ?? [:]
    }

    /// Stores (or replaces) a tile, then evicts the least recently used past the size bound.
    func store(_ key: String, _ tile: CachedTile, now: Date) {
        storeBounded { db in
            try db.execute(sql: """
                    INSERT INTO tile (key, body, size, etag, lastModified, expiresAt, lastUsedAt)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (key) DO UPDATE SET body = excluded.body, size = excluded.size, etag = excluded.etag,
                        lastModified = excluded.lastModified, expiresAt = excluded.expiresAt, lastUsedAt = excluded.lastUsedAt
                """, arguments: [key, Data(tile.body), tile.body.count, tile.etag, tile.lastModified,
                                 tile.expiresAt.timeIntervalSince1970, now.timeIntervalSince1970])
        }
    }

    /// After a 304: the stored body stays, with the new expiry and validators.
    func refresh(_ key: String, _ tile: CachedTile, now: Date) {
        _ = use("write") { pool in
            try pool.write { db in
                try db.execute(sql: "UPDATE tile SET etag = ?, lastModified = ?, expiresAt = ?, lastUsedAt = ? WHERE key = ?",
                               arguments: [tile.etag, tile.lastModified, tile.expiresAt.timeIntervalSince1970,
                                           now.timeIntervalSince1970, key])
            }
        }
    }

    /// A finished map stored by `storeRenderedMap`, marked as used now; nil when there is none.
    func renderedMap(_ key: String, now: Date) -> [UInt8]? {
        use("read") { pool in
            try pool.write { db -> [UInt8]? in
                guard let row = try Row.fetchOne(db, sql: "SELECT png, lastUsedAt FROM map WHERE key = ?", arguments: [key]) else {
                    return nil
                }
                try Self.markUsed(db, "map", [(key, row["lastUsedAt"])], now: now)
                return [UInt8](row["png"] as Data)
            }
        } ?? nil
    }

    /// Keeps a finished map under `key` (see `RenderedMapKey`: it names the tiles' bytes, so a
    /// tile that changed makes a new key, never a stale hit). Counted in the same size bound.
    func storeRenderedMap(_ key: String, _ png: [UInt8], now: Date) {
        storeBounded { db in
            try db.execute(sql: """
                INSERT INTO map (key, png, size, lastUsedAt) VALUES (?, ?, ?, ?)
                ON CONFLICT (key) DO UPDATE SET png = excluded.png, size = excluded.size, lastUsedAt = excluded.lastUsedAt
                """, arguments: [key, Data(png), png.count, now.timeIntervalSince1970])
        }
    }

    /// The attribution strip stored under `key` (see `AttributionStrip.cacheKey`), marked as used
    /// now; nil when there is none or what is stored does not have the size it claims.
    func attributionStrip(_ key: String, now: Date) -> AttributionStrip? {
        use("read") { pool in
            try pool.write { db -> AttributionStrip? in
                guard let row = try Row.fetchOne(db, sql: "SELECT width, height, hasAlpha, pixels, lastUsedAt FROM strip WHERE key = ?",
                                                 arguments: [key]) else { return nil }
                try Self.markUsed(db, "strip", [(key, row["lastUsedAt"])], now: now)
                let width: Int = row["width"], height: Int = row["height"], pixels: Data = row["pixels"]
                guard (1...CairoPNG.maximumSide).contains(width), (1...CairoPNG.maximumSide).contains(height),
                      pixels.count == width * height * 4 else { return nil }
                return AttributionStrip(image: DecodedImage(width: width, height: height, hasAlpha: row["hasAlpha"],
                                                            pixels: [UInt8](pixels)))
            }
        } ?? nil
    }

    func storeAttributionStrip(_ key: String, _ strip: AttributionStrip, now: Date) {
        let image = strip.image
        storeBounded { db in
            try db.execute(sql: """
                INSERT INTO strip (key, width, height, hasAlpha, pixels, size, lastUsedAt)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (key) DO UPDATE SET width = excluded.width, height = excluded.height,
                    hasAlpha = excluded.hasAlpha, pixels = excluded.pixels, size = excluded.size, lastUsedAt = excluded.lastUsedAt
                """, arguments: [key, image.width, image.height, image.hasAlpha, Data(image.pixels),
                                 image.pixels.count, now.timeIntervalSince1970])
        }
    }

    /// What every store does: `insert` (tile, map or strip) and the eviction it may call for in
    /// one transaction, then the WAL kept short.
    private func storeBounded(_ insert: (Database) throws -> Void) {
        _ = use("write") { pool in
            try pool.write { db in
                try insert(db)
                try self.evict(db)
            }
            try self.keepWALShort(pool)
        }
    }

    /// How stale a stored use may be before a read writes the new one: eviction needs the order
    /// of use to within the minute, not the millisecond, and a read that writes nothing
    /// commits nothing (no write to the WAL, no checkpoint) — most reads of a map logged in
    /// the same place as the one before.
    static let touchInterval: TimeInterval = 60

    /// Writes `now` as the last use of the `uses` whose stored use is `touchInterval` old or
    /// more (or in the future: a clock set back). `table` is one of this type's literals.
    private static func markUsed(_ db: Database, _ table: String, _ uses: [(key: String, lastUsedAt: Double)], now: Date) throws {
        let stale = uses.filter { abs(now.timeIntervalSince1970 - $0.lastUsedAt) >= touchInterval }.map(\.key)
        guard !stale.isEmpty else { return }
        let marks = Array(repeating: "?", count: stale.count).joined(separator: ",")
        try db.execute(sql: "UPDATE \(table) SET lastUsedAt = ? WHERE key IN (\(marks))",
                       arguments: StatementArguments([now.timeIntervalSince1970] + stale))
    }

    /// For tests and `enlog map`: stored tiles and their bytes (nil when the cache is off).
    func statistics() -> (tiles: Int, bytes: Int)? {
        use("read") { pool in
            try pool.read { db in
                let row = try Row.fetchOne(db, sql: "SELECT count(*) AS n, total(size) AS bytes FROM tile")!
                return (row["n"] as Int, Int(row["bytes"] as Double))
            }
        }
    }

    var isOff: Bool { state.withLock { if case .off = $0 { return true } else { return false } } }

    /// Tiles, finished maps and strips share the bound: the least recently used of any go first.
    /// The total comes from `usage` (kept by triggers) and the victims from the `…_by_use`
    /// indexes: a size stored after a blob sits on the blob's overflow pages, so summing or
    /// sorting the tables themselves would read every byte in the cache on every store.
    private func evict(_ db: Database) throws {
        var excess = try (Int.fetchOne(db, sql: "SELECT bytes FROM usage") ?? 0) - maxBytes
        guard excess > 0 else { return }
        var victims: [(table: String, row: Int64)] = []
        let rows = try Row.fetchCursor(db, sql: """
            SELECT 'tile' AS source, rowid AS n, size, lastUsedAt FROM tile
            UNION ALL SELECT 'map', rowid, size, lastUsedAt FROM map
            UNION ALL SELECT 'strip', rowid, size, lastUsedAt FROM strip
            ORDER BY lastUsedAt, size
            """)
        while excess > 0, let row = try rows.next() {
            victims.append((row["source"], row["n"]))
            excess -= row["size"] as Int
        }
        for victim in victims {
            // The table name comes from the query's own literals above.
            try db.execute(sql: "DELETE FROM \(victim.table) WHERE rowid = ?", arguments: [victim.row])
        }
    }

    /// Past this size the WAL is checkpointed into the file and truncated (a few new maps).
    static let walLimit = 1 << 20

    /// Each enlog process is the first to open the cache, and SQLite then rebuilds its WAL index
    /// from the WAL file, reading all of it and forgetting how much was checkpointed: a WAL
    /// that is not truncated is never restarted by short-lived processes, grows with every
    /// write, and costs every later process more to open (and every automatic checkpoint more
    /// to copy). Truncated here, after a write, by the process that wrote: busy readers in
    /// other processes only postpone it to the next write.
    private func keepWALShort(_ pool: DatabasePool) throws {
        var status = stat()
        guard stat(path + "-wal", &status) == 0, Int(status.st_size) > Self.walLimit else { return }
        try pool.writeWithoutTransaction { db in
            _ = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }

    /// Runs `body` on the open cache; the first failure turns the cache off with one warning.
    private func use<T>(_ what: String, _ body: (DatabasePool) throws -> T) -> T? {
        guard let pool = openedPool() else { return nil }
        do {
            return try body(pool)
        } catch {
            turnOff("cannot \(what) \(path): \(Self.describe(error, path: path))")
            return nil
        }
    }

    private func openedPool() -> DatabasePool? {
        // Opened under the lock so that concurrent first uses open it once.
        let (pool, problem): (DatabasePool?, String?) = state.withLock { state in
            switch state {
            case .open(let pool): return (pool, nil)
            case .off: return (nil, nil)
            case .unopened:
                do {
                    let pool = try Self.open(path)
                    state = .open(pool)
                    return (pool, nil)
                } catch {
                    state = .off
                    return (nil, "cannot open \(path): \(Self.describe(error, path: path))")
                }
            }
        }
        if let problem { warn("tile cache off, maps use memory and the network only (\(problem))") }
        return pool
    }

    private func turnOff(_ problem: String) {
        let wasOn = state.withLock { state -> Bool in
            if case .off = state { return false }
            state = .off
            return true
        }
        if wasOn { warn("tile cache off, maps use memory and the network only (\(problem))") }
    }

    private static func open(_ path: String) throws -> DatabasePool {
        let directory = (path as NSString).deletingLastPathComponent
        // Tiles and maps of where the user has been: the owner's alone (0700, 0600 and the -wal
        // and -shm following the file's mode), whatever the umask.
        try PrivateFiles.makeDirectories(directory)
        PrivateFiles.createEmpty(path)
        var configuration = Configuration()
        configuration.busyMode = .timeout(2)
        configuration.label = "enlog.tiles"
        configuration.prepareDatabase { db in
            // A cache: losing the last writes in a power cut only costs a download.
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        let pool = try DatabasePool(path: path, configuration: configuration)
        // Most opens find the schema in place: one read of user_version, no transaction.
        try pool.writeWithoutTransaction { db in
            if try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0 < schemaVersion {
                try db.inTransaction(.immediate) {
                    try createSchema(db)
                    return .commit
                }
            }
        }
        return pool
    }

    /// 1: the byte total kept in `usage` by triggers, and `(lastUsedAt, size)` indexes.
    static let schemaVersion = 1

    /// Creates the tables, or brings a cache of an earlier enlog up to `schemaVersion`. Checked
    /// again inside the immediate transaction, so processes opening a new cache together create
    /// it once and need no migration lock.
    private static func createSchema(_ db: Database) throws {
        guard try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0 < schemaVersion else { return }
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS tile (
                key TEXT PRIMARY KEY NOT NULL,   -- SHA-256 of the URL: a keyed URL's secret never lands on disk
                body BLOB NOT NULL,
                size INTEGER NOT NULL,
                etag TEXT,
                lastModified TEXT,
                expiresAt DOUBLE NOT NULL,
                lastUsedAt DOUBLE NOT NULL);
            CREATE TABLE IF NOT EXISTS map (
                key TEXT PRIMARY KEY NOT NULL,   -- RenderedMapKey: layout, drawing and the tiles' SHA-256s
                png BLOB NOT NULL,
                size INTEGER NOT NULL,
                lastUsedAt DOUBLE NOT NULL);
            CREATE TABLE IF NOT EXISTS strip (
                key TEXT PRIMARY KEY NOT NULL,   -- AttributionStrip.cacheKey: drawing, text and font file
                width INTEGER NOT NULL,
                height INTEGER NOT NULL,
                hasAlpha BOOLEAN NOT NULL,
                pixels BLOB NOT NULL,            -- cairo's 32-bit words, this machine's byte order
                size INTEGER NOT NULL,
                lastUsedAt DOUBLE NOT NULL);
            DROP INDEX IF EXISTS tile_on_lastUsedAt;
            CREATE TABLE IF NOT EXISTS usage (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                bytes INTEGER NOT NULL);         -- the sum of size over the three tables
            """)
        for table in ["tile", "map", "strip"] {
            // The names are the literals above.
            try db.execute(sql: """
                CREATE INDEX IF NOT EXISTS \(table)_by_use ON \(table)(lastUsedAt, size);
                CREATE TRIGGER IF NOT EXISTS \(table)_added AFTER INSERT ON \(table)
                    BEGIN UPDATE usage SET bytes = bytes + NEW.size; END;
                CREATE TRIGGER IF NOT EXISTS \(table)_removed AFTER DELETE ON \(table)
                    BEGIN UPDATE usage SET bytes = bytes - OLD.size; END;
                CREATE TRIGGER IF NOT EXISTS \(table)_resized AFTER UPDATE OF size ON \(table)
                    BEGIN UPDATE usage SET bytes = bytes - OLD.size + NEW.size; END;
                """)
        }
        // A cache from before the total existed: counted once, here, through the new indexes.
        try db.execute(sql: """
            INSERT OR REPLACE INTO usage (id, bytes) VALUES (1,
                (SELECT total(size) FROM tile) + (SELECT total(size) FROM map) + (SELECT total(size) FROM strip))
            """)
        try db.execute(sql: "PRAGMA user_version = \(schemaVersion)")
    }


    private static func describe(_ error: Error, path: String) -> String {
        if let error = error as? DatabaseError {
            if DiskSpace.mayBeFull(sqliteResultCode: error.resultCode.rawValue), DiskSpace.isExhausted(near: path) { return String(cString: strerror(ENOSPC)) }
            return error.message ?? "\(error.resultCode)"
        }
        return HTTPText.oneLine((error as NSError).localizedDescription)
    }
}
