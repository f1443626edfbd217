import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture
import Compose
import Outbox

/// A fix already in hand, as a `LocationSource`: how `watch` hands its fix to the same
/// `LocationLogger` that `enlog log` uses.
package struct GivenFix: LocationSource {
    package let fix: Fix
    package init(fix: Fix) { self.fix = fix }
    package func currentFix() async throws -> Fix { fix }
}
