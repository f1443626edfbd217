import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

/// Reading Nominatim's `/reverse?format=jsonv2&addressdetails=1` replies.
///
/// A reply is one JSON object: `place_id`, `licence`, `osm_type`, `osm_id`, `lat`, `lon`
/// (strings), `category`, `type`, `place_rank`, `importance`, `addresstype`, `name`,
/// `display_name`, `address` (an object of strings: `road`, `city`, `state`, `country_code`, …)
/// and `boundingbox`. Where nothing is found it is `{"error":"Unable to geocode"}`.
package enum NominatimReply {
    /// The address in `body`; throws `.noAddress` for Nominatim's "Unable to geocode" answer
    /// or a reply with nothing to show, `.malformedReply` for anything that is not such a reply.
    package static func parse(_ body: [UInt8]) throws(GeocodingError) -> Address {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(body), options: [])
        } catch {
            throw .malformedReply(body.isEmpty ? "empty body" : "not JSON")
        }
        guard let reply = object as? [String: Any] else {
            throw .malformedReply("not a JSON object")
        }
        if let error = reply["error"] {
            let message = (error as? String)
                ?? ((error as? [String: Any])?["message"] as? String)
                ?? "unknown error"
            if message.range(of: "unable to geocode", options: .caseInsensitive) != nil {
                throw .noAddress
            }
            throw .malformedReply("error \(AddressText.oneLine(message).map { String($0.prefix(120)) } ?? "")")
        }
        var components: [String: String] = [:]
        if let address = reply["address"] {
            guard let dictionary = address as? [String: Any] else {
                throw .malformedReply("\"address\" is not an object")
            }
            for (key, value) in dictionary {
                if let text = value as? String { components[key] = text }
            }
        }
        let displayName = reply["display_name"] as? String
        if reply["address"] == nil, displayName == nil {
            throw .malformedReply("no \"address\" nor \"display_name\"")
        }
        let result = Address(nominatimComponents: components, name: reply["name"] as? String,
                             displayName: displayName)
        if result.isEmpty { throw .noAddress }
        return result
    }
}
