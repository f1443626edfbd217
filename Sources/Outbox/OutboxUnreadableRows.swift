import Foundation
import GRDB
import Synchronization
import Support

/// A row holding a value enlog cannot read back: another program (`sqlite3`, a repair gone
/// wrong) wrote text where a number or a time is stored. The listings that meet one (history,
/// digest, the notes) leave it out with one warning line naming the row and the value, and go
/// on with the others; the row itself stays in the outbox as it is, so nothing is lost and the
/// user can mend it.
package struct UnreadableRow: Sendable, Equatable, Hashable {
    package var table: String
    package var id: Int64?
    /// What is wrong with it, e.g. `its altitude holds "high", which is not a number`.
    package var detail: String

    /// One line: which row, what is wrong, that it is kept, and how to look at it.
    package func warning(outbox path: String) -> String {
        let name = table == "note" ? "note" : table
        let row = id.map { "\(name) \($0)" } ?? "a \(name) row"
        let show = id.map { " (sqlite3 \(path) \"SELECT * FROM \(table) WHERE id = \($0)\" shows it)" } ?? ""
        return "\(row) is left out: \(detail); it stays in the outbox as it is\(show)"
    }
}

extension OutboxStore {
    /// The records `request` selects, decoded one row at a time: a row that cannot be decoded
    /// is added to `unreadable` instead of failing the whole read. Stops after `limit` records.
    static func readableRecords<R: FetchableRecord & TableRecord>(_ request: QueryInterfaceRequest<R>, _ db: Database,
                                                                  limit: Int? = nil, unreadable: inout [UnreadableRow]) throws -> [R] {
        let rows = try Row.fetchCursor(db, request.asRequest(of: Row.self))
        // GRDB reads a number column through sqlite3_column_double/int64, which turn text into
        // 0 without a word (a latitude "north" would list as 0.000000): the storage class of each
        // value in a column declared numeric is checked first.
        let numericTypes: Set<String> = ["INTEGER", "INT", "DOUBLE", "REAL", "FLOAT", "NUMERIC", "BOOLEAN"]
        let numericColumns = Set(try db.columns(in: R.databaseTableName).filter { numericTypes.contains($0.type.uppercased()) }.map(\.name))
        var numericIndexes: [(index: Int, name: String)]?
        var found: [R] = []
        while let row = try rows.next() {
            if numericIndexes == nil {
                numericIndexes = row.columnNames.enumerated().filter { numericColumns.contains($0.element) }.map { ($0.offset, $0.element) }
            }
            if let (column, value) = numericIndexes!.lazy.map({ ($0.name, row[$0.index] as DatabaseValue) }).first(where: { $0.1.isTextOrBlob }) {
                unreadable.append(UnreadableRow(table: R.databaseTableName, id: Int64.fromDatabaseValue(row["id"] as DatabaseValue),
                                                detail: "its \(column) holds \(value.shown), which is not a number"))
                continue
            }
            do {
                found.append(try R(row: row))
            } catch {
                unreadable.append(UnreadableRow(table: R.databaseTableName,
                                                id: Int64.fromDatabaseValue(row["id"] as DatabaseValue),
                                                detail: Self.unreadableDetail(error)))
            }
            if let limit, found.count >= limit { break }
        }
        return found
    }

    /// GRDB says `could not decode Double from database value "high" - column: "altitude", …`
    /// followed by the whole row and query; this keeps the column, the value and what it is not.
    static func unreadableDetail(_ error: any Error) -> String {
        let text = String(describing: error)
        let head = text.components(separatedBy: " - ").first ?? text
        guard let typeStart = head.range(of: "could not decode "), let typeEnd = head.range(of: " from database value "),
              let columnStart = text.range(of: "column: \""),
              let columnEnd = text[columnStart.upperBound...].firstIndex(of: "\"") else {
            return TerminalText.oneLine(String(head.prefix(200)))
        }
        let type = String(head[typeStart.upperBound..<typeEnd.lowerBound])
        let value = String(head[typeEnd.upperBound...].prefix(80))
        let column = String(text[columnStart.upperBound..<columnEnd])
        let expected: String
        switch type.replacingOccurrences(of: "Optional<", with: "").replacingOccurrences(of: ">", with: "") {
        case "Double", "Float", "Int", "Int64", "Int32", "Bool": expected = "a number"
        case "Date": expected = "a time"
        case "String": expected = "text"
        default: expected = "what enlog stores there (\(type))"
        }
        return TerminalText.oneLine("its \(column) holds \(value), which is not \(expected)")
    }

    /// Rows already said in this process: a command that reads the same rows twice says each once.
    private static let warnedRows = Mutex<Set<UnreadableRow>>([])

    /// Says each row left out, once, as a warning on stderr.
    func warn(_ unreadable: [UnreadableRow]) {
        guard !unreadable.isEmpty else { return }
        let fresh = Self.warnedRows.withLock { warned in unreadable.filter { warned.insert($0).inserted } }
        for row in fresh.prefix(20) { StandardError.line("enlog: warning: " + row.warning(outbox: path)) }
        if fresh.count > 20 { StandardError.line("enlog: warning: \(fresh.count - 20) more rows are left out for the same reason") }
    }

    /// A read whose listing may leave rows out: they are said once the read is done.
    func readSkipping<T: Sendable>(_ body: @escaping @Sendable (Database, inout [UnreadableRow]) throws -> T) async throws(OutboxError) -> T {
        let (result, unreadable) = try await read { db in
            var unreadable: [UnreadableRow] = []
            let result = try body(db, &unreadable)
            return (result, unreadable)
        }
        warn(unreadable)
        return result
    }
}

extension DatabaseValue {
    fileprivate var isTextOrBlob: Bool {
        switch storage {
        case .string, .blob: return true
        default: return false
        }
    }

    /// The value as a message shows it: text quoted and cut, a blob by its size.
    var shown: String {
        switch storage {
        case .string(let text):
            let cut = text.count > 60 ? String(text.prefix(60)) + "…" : text
            return "\"" + TerminalText.oneLine(cut) + "\""
        case .blob(let data): return "a blob of \(data.count) bytes"
        default: return description
        }
    }
}

/// What a column of a raw read (`checkedRows`) must hold for its row to be read. GRDB's
/// `row[i]` traps on a value of another type, and SQLite's own conversions turn text into 0:
/// every value is checked against this before a row is turned into a value.
enum StoredKind: Sendable {
    /// A number (INTEGER or REAL), never NULL.
    case number
    /// A number or NULL.
    case optionalNumber
    /// A whole number that fits an `Int`, never NULL.
    case wholeNumber
    /// Text or NULL.
    case optionalText
    /// Seconds since 1970 computed in SQL from the stored time in `column`: NULL when what is
    /// stored there is no time SQLite can read.
    case time(column: String)

    /// Whether `value` is what this kind must hold.
    func accepts(_ value: DatabaseValue) -> Bool {
        switch (self, value.storage) {
        case (.number, .int64), (.number, .double): return true
        case (.optionalNumber, .int64), (.optionalNumber, .double), (.optionalNumber, .null): return true
        case (.optionalText, .string), (.optionalText, .null): return true
        case (.time, .double), (.time, .int64): return true
        case (.wholeNumber, .int64): return true
        case (.wholeNumber, .double(let number)): return Int(exactly: number) != nil
        default: return false
        }
    }
}

extension OutboxStore {
    /// The rows `sql` selects whose every value is what `columns` says (in the order selected),
    /// the others added to `unreadable`. After the listed columns the SQL selects the row's `id`,
    /// and, when `table` is nil (a UNION of tables), the table's name next to it.
    static func checkedRows(_ db: Database, sql: String, arguments: StatementArguments, table: String?,
                            columns: [(name: String, kind: StoredKind)], unreadable: inout [UnreadableRow]) throws -> [Row] {
        var found: [Row] = []
        let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
        while let row = try rows.next() {
            if let bad = columns.indices.first(where: { !columns[$0].kind.accepts(row[$0] as DatabaseValue) }) {
                let id = Int64.fromDatabaseValue(row[columns.count] as DatabaseValue)
                let rowTable = table ?? String.fromDatabaseValue(row[columns.count + 1] as DatabaseValue) ?? "?"
                unreadable.append(UnreadableRow(table: rowTable, id: id,
                                                detail: try unreadableDetail(row[bad] as DatabaseValue, column: columns[bad],
                                                                             table: rowTable, id: id, db)))
                continue
            }
            found.append(row.copy())
        }
        return found
    }

    /// What is wrong with `value` in one column of a checked read.
    private static func unreadableDetail(_ value: DatabaseValue, column: (name: String, kind: StoredKind), table: String,
                                         id: Int64?, _ db: Database) throws -> String {
        switch column.kind {
        case .number, .optionalNumber:
            return "its \(column.name) holds \(value.shown), which is not a number"
        case .wholeNumber:
            return "its \(column.name) holds \(value.shown), which is not a whole number"
        case .optionalText:
            return "its \(column.name) holds \(value.shown), which is not text"
        case .time(let stored):
            // The value read was SQLite's julianday() of it: the stored one shows what is wrong.
            let raw = try id.flatMap {
                try DatabaseValue.fetchOne(db, sql: "SELECT \"\(stored)\" FROM \"\(table)\" WHERE id = ?", arguments: [$0])
            } ?? value
            return "its \(stored) holds \(raw.shown), which is not a time"
        }
    }
}
