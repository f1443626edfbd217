import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Auth
import Capture
import Compose
import Outbox
import Diary

extension SyncRun {
    // MARK: Notebooks

    /// The guid of the notebook named `name` (case-insensitive), created when missing; nil
    /// (the account's default notebook) when no name. Resolved once per run.
    func notebookGuid(for name: String?) async throws -> EDAM.Guid? {
        guard let name, !name.isEmpty else { return nil }
        let key = name.lowercased()
        if let guid = notebookGuids[key] { return guid }
        func match() -> EDAM.Guid? { notebooks?.first { $0.name?.lowercased() == key }?.guid }
        if notebooks == nil { notebooks = try await client.listNotebooks() }
        if let guid = match() { notebookGuids[key] = guid; return guid }
        do {
            let created = try await client.createNotebook(EDAM.Notebook(name: name))
            notebooks?.append(created)
            notebookGuids[key] = created.guid
            return created.guid
        } catch EvernoteError.dataConflict {
            // Created meanwhile by someone else (or an earlier attempt whose reply was lost).
            notebooks = try await client.listNotebooks()
            if let guid = match() { notebookGuids[key] = guid; return guid }
            throw EvernoteError.dataConflict(parameter: "Notebook.name")
        }
    }
}
