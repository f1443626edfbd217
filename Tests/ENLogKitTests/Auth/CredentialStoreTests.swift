import Foundation
import XCTest
@testable import Auth

final class CredentialStoreTests: XCTestCase {
    var directory: String!

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "enlog-creds-" + UUID().uuidString
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    func sample() -> Credentials {
        Credentials(service: .evernote, host: "https://www.evernote.com", authProtocol: .oauth2, userId: 123456,
                    shard: "s1", noteStoreUrl: "https://www.evernote.com/edam/note/s1", token: "S=s1:U=1:SECRET-CLASSIC",
                    tokenExpires: Date(timeIntervalSince1970: 1_900_000_000), accessToken: "ACCESS-JWT-SECRET",
                    accessTokenExpires: Date(timeIntervalSince1970: 1_800_000_000), refreshToken: "REFRESH-SECRET",
                    clientId: "client-1", tokenEndpoint: "https://accounts.evernote.com/auth/token")
    }

    func mode(_ path: String) -> mode_t {
        var status = stat()
        XCTAssertEqual(stat(path, &status), 0)
        return status.st_mode & 0o7777
    }

    func testSaveIsMode0600WithPermissiveUmaskAndRoundTrips() throws {
        let path = directory + "/enlog/credentials.json"
        let store = CredentialStore(path: path)
        let old = umask(0)
        defer { umask(old) }
        try store.save(sample())
        XCTAssertEqual(mode(path), 0o600)
        XCTAssertEqual(mode(directory + "/enlog"), 0o700)
        XCTAssertEqual(try store.load(), sample())
        let json = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertTrue(json.contains("\"refresh_token\""))
        XCTAssertTrue(json.contains("\"protocol\" : \"oauth2\""))
    }

    func testAtomicReplaceLeavesNoTempFiles() throws {
        let path = directory + "/credentials.json"
        let store = CredentialStore(path: path)
        try store.save(sample())
        var before = stat()
        stat(path, &before)
        var changed = sample()
        changed.token = "S=s2:NEW"
        try store.save(changed)
        var after = stat()
        stat(path, &after)
        XCTAssertNotEqual(before.st_ino, after.st_ino, "replaced by rename, not rewritten in place")
        XCTAssertEqual(try store.load().token, "S=s2:NEW")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory), ["credentials.json"])
        XCTAssertEqual(mode(path), 0o600)
    }

    func testRefusesGroupOrWorldReadableFile() throws {
        let path = directory + "/credentials.json"
        let store = CredentialStore(path: path)
        try store.save(sample())
        chmod(path, 0o644)
        XCTAssertThrowsError(try store.load()) { error in
            guard let error = error as? AuthError else { return XCTFail("\(error)") }
            XCTAssertEqual(error, .credentialsInsecure(path: path, mode: "644"))
            XCTAssertEqual(error.recoverySuggestion, "chmod 600 \(path)")
            XCTAssertFalse(error.reason.contains("SECRET"))
        }
        chmod(path, 0o640)
        XCTAssertThrowsError(try store.load())
        chmod(path, 0o600)
        XCTAssertNoThrow(try store.load())
    }

    func testMissingDeleteAndRedaction() throws {
        let store = CredentialStore(path: directory + "/credentials.json")
        XCTAssertNil(try store.loadIfPresent())
        XCTAssertThrowsError(try store.load()) { XCTAssertEqual(($0 as? AuthError)?.recoverySuggestion, "run `enlog auth login`") }
        try store.save(sample())
        let status = sample().redacted(now: Date(timeIntervalSince1970: 1_850_000_000))
        XCTAssertFalse(status.contains("SECRET"))
        XCTAssertTrue(status.contains("shard: s1"))
        XCTAssertTrue(status.contains("(expired)"))
        XCTAssertTrue(try store.delete())
        XCTAssertFalse(try store.delete())
        XCTAssertNil(try store.loadIfPresent())
    }

    func testDefaultPathUsesXDGConfigHome() {
        XCTAssertEqual(CredentialStore.defaultPath(environment: ["XDG_CONFIG_HOME": "/x/cfg", "HOME": "/h"]), "/x/cfg/enlog/credentials.json")
        XCTAssertEqual(CredentialStore.defaultPath(environment: ["HOME": "/h"]), "/h/.config/enlog/credentials.json")
    }
}
