import Foundation
import Mustache

/// What one rendering of a template may still produce, UTF-16 code units (as Evernote counts a
/// note's content). swift-mustache renders to a String in one go, so the context's values stand
/// in for themselves: a list charges each repetition of its section before it is rendered, a
/// value its escaped text when it is rendered, and once the budget is spent a list yields no more
/// items and a value renders as nothing. The work of a template that multiplies (a section over
/// a list inside a section over the same list) is bounded by the budget however deep it nests.
///
/// A charge is an upper estimate of what is rendered (standalone tag lines lose their blanks, an
/// unescaped value its escaping; a repetition costs at least `leastPerItem`, so that one that
/// renders nothing is still work), so a rendering over budget is one that could pass it.
final class RenderBudget {
    private var remaining: Int
    private(set) var exceeded = false
    private let perItem: [String: Int]
    private let unknown: Int

    init(limit: Int, shape: TemplateShape, context: [String: Any]) {
        let charges = shape.charges(listNames: Self.listNames(in: context))
        remaining = limit
        perItem = charges.perItem
        unknown = charges.unknown
        _ = charge(charges.top)
    }

    /// False (and the budget spent for good) when `units` more would pass it.
    func charge(_ units: Int) -> Bool {
        guard !exceeded else { return false }
        remaining -= units
        if remaining < 0 { exceeded = true }
        return !exceeded
    }

    /// The least a repetition is charged: one that renders nothing is still work, and the
    /// number of repetitions is bounded with the rest.
    static let leastPerItem = 8

    func chargeItem(of list: String) -> Bool { charge(max(perItem[list] ?? unknown, Self.leastPerItem)) }

    /// The names under which the context holds lists, at any depth.
    private static func listNames(in value: Any, under name: String? = nil) -> Set<String> {
        switch value {
        case let dictionary as [String: Any]:
            return dictionary.reduce(into: Set<String>()) { names, entry in names.formUnion(listNames(in: entry.value, under: entry.key)) }
        case let array as [Any]:
            return array.reduce(into: Set(name.map { [$0] } ?? [])) { names, item in names.formUnion(listNames(in: item)) }
        default:
            return []
        }
    }

    /// `context` with every value standing in for itself against this budget.
    func wrap(_ value: Any, name: String = "") -> Any {
        switch value {
        case let dictionary as [String: Any]:
            return BudgetedDictionary(values: dictionary.reduce(into: [String: Any]()) { $0[$1.key] = wrap($1.value, name: $1.key) },
                                      raw: dictionary, budget: self)
        case let array as [Any]:
            return BudgetedList(name: name, items: array.map { wrap($0) }, raw: array, budget: self)
        case let bool as Bool:
            return BudgetedValue(raw: bool, budget: self)
        default:
            return BudgetedValue(raw: value, budget: self)
        }
    }

    /// What `{{x}}` renders for `text` at most: its ENML escaping.
    func chargeText(_ text: String) -> Bool { charge(ENMLCharacters.escaped(text).utf16.count) }
}

/// A list of the context: each item it yields is charged first.
struct BudgetedList: MustacheSequence, MustacheParent, MustacheCustomRenderable, MustacheTransformable {
    let name: String
    let items: [Any]
    let raw: [Any]
    let budget: RenderBudget

    struct Iterator: IteratorProtocol {
        var base: IndexingIterator<[Any]>
        let name: String
        let budget: RenderBudget

        mutating func next() -> Any? {
            guard let item = base.next(), budget.chargeItem(of: name) else { return nil }
            return item
        }
    }

    func makeIterator() -> Iterator { Iterator(base: items.makeIterator(), name: name, budget: budget) }

    /// Nothing is looked up inside a list (not its stored properties either, which reflection would find).
    func child(named: String) -> Any? { nil }

    var renderText: String {
        let text = String(describing: raw)
        return budget.chargeText(text) ? text : ""
    }

    var isNull: Bool { false }

    /// Array's transforms, the lists they give still charged.
    func transform(_ name: String) -> Any? {
        switch name {
        case "first": return items.first
        case "last": return items.last
        case "reversed": return BudgetedList(name: self.name, items: Array(items.reversed()), raw: Array(raw.reversed()), budget: budget)
        case "count": return BudgetedValue(raw: items.count, budget: budget)
        case "empty": return BudgetedValue(raw: items.isEmpty, budget: budget)
        default: return nil
        }
    }
}

/// An object of the context: its values are looked up as a dictionary's.
struct BudgetedDictionary: MustacheParent, MustacheCustomRenderable {
    let values: [String: Any]
    let raw: [String: Any]
    let budget: RenderBudget

    func child(named name: String) -> Any? { values[name] }

    var renderText: String {
        let text = String(describing: raw)
        return budget.chargeText(text) ? text : ""
    }

    var isNull: Bool { false }
}

/// A string, number or boolean of the context: charged when rendered. A false boolean is null,
/// so that `{{#flag}}` skips and `{{^flag}}` shows its section as for a `Bool`.
struct BudgetedValue: MustacheParent, MustacheCustomRenderable, MustacheTransformable {
    let raw: Any
    let budget: RenderBudget

    func child(named: String) -> Any? { nil }

    var renderText: String {
        let text = String(describing: raw)
        return budget.chargeText(text) ? text : ""
    }

    var isNull: Bool { (raw as? Bool) == false }

    /// String's and integers' transforms (`uppercased`, `empty`, `plusone`…), their results charged too.
    func transform(_ name: String) -> Any? {
        guard let transformable = raw as? MustacheTransformable, let result = transformable.transform(name) else { return nil }
        if let substring = result as? Substring { return budget.wrap(String(substring)) }
        return budget.wrap(result)
    }
}
