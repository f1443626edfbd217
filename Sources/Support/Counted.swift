/// "1 note", "2 notes", "0 notes": a count with its noun in the right number (English plurals
/// in -s are all enlog prints).
public func counted(_ count: Int, _ noun: String) -> String {
    "\(count) \(noun)\(count == 1 ? "" : "s")"
}
