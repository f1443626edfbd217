import Foundation

extension Fix {
    /// Great-circle distance in metres (haversine on the IUGG mean radius): within 0.5 % of the
    /// ellipsoid, far finer than any threshold here.
    public func distance(to b: Fix) -> Double {
        let radius = 6_371_008.8
        let φ1 = latitude * .pi / 180, φ2 = b.latitude * .pi / 180
        let Δφ = φ2 - φ1, Δλ = (b.longitude - longitude) * .pi / 180
        let h = sin(Δφ / 2) * sin(Δφ / 2) + cos(φ1) * cos(φ2) * sin(Δλ / 2) * sin(Δλ / 2)
        return 2 * radius * asin(min(1, h.squareRoot()))
    }
}
