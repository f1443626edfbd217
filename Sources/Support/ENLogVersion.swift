public enum ENLogVersion {
    public static let current = "0.1.0"
}
