import Foundation

extension Fix {
    /// Great-circle distance in metres (haversine on the IUGG mean radius): within 0.5 % of the
    /// ellipsoid, far finer than any threshold here.
    package func distance(to b: Fix) -> Double {
        Self.metres(latitude, longitude, b.latitude, b.longitude)
    }

    /// `distance(to:)` between two positions that are not fixes (stays, places).
    package static func metres(_ latitude1: Double, _ longitude1: Double, _ latitude2: Double, _ longitude2: Double) -> Double {
        let radius = 6_371_008.8
        let φ1 = latitude1 * .pi / 180, φ2 = latitude2 * .pi / 180
        let Δφ = φ2 - φ1, Δλ = (longitude2 - longitude1) * .pi / 180
        let h = sin(Δφ / 2) * sin(Δφ / 2) + cos(φ1) * cos(φ2) * sin(Δλ / 2) * sin(Δλ / 2)
        return 2 * radius * asin(min(1, h.squareRoot()))
    }
}
