import Foundation
import GRDB
import Support
import EvernoteAPI
import Configuration
import Capture
import Compose

/// A row of `fix`: every fix that was logged, kept as location history.
package struct FixRecord: Codable, Sendable, Equatable, Identifiable, FetchableRecord, MutablePersistableRecord, StoredDates {
    package static let databaseTableName = "fix"

    package var id: Int64?
    package var latitude: Double
    package var longitude: Double
    package var altitude: Double?
    package var horizontalAccuracy: Double?
    package var speed: Double?
    package var course: Double?
    package var timestamp: Date
    package var source: Fix.Source
    package var createdAt: Date
    /// Seconds east of UTC of the clock the fix's source wrote its time in (an import that said
    /// so); nil: the fix was lived in note.time_zone as far as enlog knows.
    package var utcOffset: Int?
    /// The phone (`enlog devices`) or the imported file's device the fix came from; nil for enlog's own.
    package var device: String?

    package init(_ fix: Fix, createdAt: Date = Date()) {
        latitude = fix.latitude
        longitude = fix.longitude
        altitude = fix.altitude
        horizontalAccuracy = fix.horizontalAccuracy
        speed = fix.speed
        course = fix.course
        timestamp = fix.timestamp
        source = fix.source
        self.createdAt = createdAt
    }

    /// The stored values as a checked `Fix`.
    package func fix() throws(OutboxError) -> Fix {
        do {
            return try Fix(latitude: latitude, longitude: longitude, altitude: altitude,
                           horizontalAccuracy: horizontalAccuracy, speed: speed, course: course,
                           timestamp: timestamp, source: source)
        } catch {
            throw .storedFixInvalid(id: id ?? 0, detail: error.reason)
        }
    }

    package mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }

    /// The columns, times as `StorageTime` text; `utcOffset` only when known, so a fix is still
    /// written the same into an outbox from before the `day-zones-v1` migration.
    package func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id
        container["latitude"] = latitude
        container["longitude"] = longitude
        container["altitude"] = altitude
        container["horizontalAccuracy"] = horizontalAccuracy
        container["speed"] = speed
        container["course"] = course
        container["timestamp"] = StorageTime.text(timestamp)
        container["source"] = source
        container["createdAt"] = StorageTime.text(createdAt)
        if let utcOffset { container["utcOffset"] = utcOffset }
        if let device { container["device"] = device }
    }
}

extension Fix.Source: DatabaseValueConvertible {}

/// A row of `note`: one note waiting for, undergoing, or done with upload.
package struct OutboxNote: Codable, Sendable, Equatable, Identifiable, FetchableRecord, MutablePersistableRecord, StoredDates {
    package static let databaseTableName = "note"

    /// pending → sending → synced, or sending → failed (retried automatically when due) or
    /// parked (kept aside until someone calls `retry`); or pending/failed → exported: written to
    /// an ENEX file as its destination (`export --enex --new`), which sync leaves alone.
    package enum State: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
        case pending, sending, synced, failed, parked, exported

        var explanation: String {
            switch self {
            case .pending: return "it is waiting to be sent"
            case .sending: return "it is being sent right now"
            case .synced: return "it was already uploaded"
            case .failed: return "its last upload failed"
            case .parked: return "it is parked"
            case .exported: return "it was exported to an ENEX file"
            }
        }

        func suggestion(for action: Action) -> String? {
            switch self {
            case .sending: return "wait for the running sync to finish"
            case .synced: return "the note is in Evernote already; nothing to do"
            case .exported: return "`enlog queue retry ID` puts it back in the queue if its ENEX file was never imported"
            case .pending where action == .markSynced || action == .markFailed:
                return "mark the note as sending before reporting an upload result"
            default: return nil
            }
        }
    }

    package enum Action: String, Sendable, Codable {
        case markSending = "send"
        case markSynced = "mark as synced"
        case markFailed = "mark as failed"
        case retry
        case drop
        case park
        case resolveAddress = "set the address of"
    }

    package var id: Int64?
    package var uid: String
    package var fixId: Int64
    package var title: String
    package var content: String
    package var notebookName: String?
    package var tags: [String]
    package var latitude: Double?
    package var longitude: Double?
    package var altitude: Double?
    package var placeName: String?
    package var subjectDate: Date?
    package var source: String?
    package var sourceApplication: String?
    package var addressPending: Bool
    package var state: State
    /// The Evernote note GUID and update sequence number once uploaded.
    package var guid: String?
    package var usn: Int64?
    package var attempts: Int
    package var lastAttemptAt: Date?
    package var nextAttemptAt: Date?
    package var lastError: String?
    package var account: String?
    package var createdAt: Date
    package var updatedAt: Date

    init(draft: NoteDraft, fix: FixRecord, fixId: Int64, now: Date) {
        uid = draft.uid
        self.fixId = fixId
        title = draft.title
        content = draft.content
        notebookName = draft.notebookName
        tags = draft.tags
        latitude = fix.latitude
        longitude = fix.longitude
        altitude = fix.altitude
        placeName = draft.placeName
        subjectDate = draft.subjectDate
        source = draft.source
        sourceApplication = draft.sourceApplication
        addressPending = draft.addressPending
        state = .pending
        attempts = 0
        account = draft.account
        createdAt = now
        updatedAt = now
    }

    package mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }

    package enum Columns {
        package static let id = Column(CodingKeys.id)
        package static let uid = Column(CodingKeys.uid)
        package static let fixId = Column(CodingKeys.fixId)
        package static let state = Column(CodingKeys.state)
        package static let addressPending = Column(CodingKeys.addressPending)
        package static let nextAttemptAt = Column(CodingKeys.nextAttemptAt)
        package static let lastAttemptAt = Column(CodingKeys.lastAttemptAt)
        package static let updatedAt = Column(CodingKeys.updatedAt)
    }
}
