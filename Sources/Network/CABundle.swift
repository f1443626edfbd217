import CCurl
import Foundation
import Synchronization
import Support

/// The PEM bundle of `network.ca_file`, read by enlog (bounded in size, and in time for anything
/// but a regular file) and handed to libcurl as a blob (CURLOPT_CAINFO_BLOB): given the path,
/// libcurl's TLS library would read whatever it names without limit (/dev/zero, a FIFO). Read
/// once per process and path; a run makes many requests with the same file.
package enum CABundle {
    private static let read = Mutex<[String: Result<[UInt8], HTTPError>]>([:])

    package static func bytes(at path: String) -> Result<[UInt8], HTTPError> {
        if let known = read.withLock({ $0[path] }) { return known }
        let result: Result<[UInt8], HTTPError>
        do throws(FileBytes.ReadError) {
            let bytes = try FileBytes.read(path, limit: .caBundle, accepting: .regularFilesOnly)
            result = bytes.isEmpty ? .failure(.caFileUnusable(path: path, detail: "the file is empty"))
                                   : .success(bytes)
        } catch {
            result = .failure(.caFileUnusable(path: path, detail: error.reason))
        }
        read.withLock { $0[path] = result }
        return result
    }
}
