import Foundation
import Observation

/// A ``FetchedResultsController``'s latest snapshot as an `@Observable` object, for SwiftUI views
/// and view models (SwiftData's `@Query`, Core Data's `@SectionedFetchRequest`).
///
/// ```swift
/// struct TripList: View {
///     @State private var trips = FetchedResultsModel(
///         FetchedResultsController(store: store, request: Trip.request(), sectionedBy: { $0.owner.familyName }))
///
///     var body: some View {
///         List(trips.sections, id: \.name) { section in
///             Section(section.name) { ForEach(trips.ids(in: section), id: \.self) { TripRow(id: $0) } }
///         }
///     }
/// }
/// ```
///
/// It starts observing when created and stops when it is deallocated (or the store closes). The
/// first snapshot arrives asynchronously, after the first fetch: until then ``snapshot`` is `nil`
/// and ``sections`` is empty, so a view shows its empty or loading state first.
/// Properties change on the main actor, where SwiftUI reads them; code outside SwiftUI observes
/// them with `withObservationTracking`.
///
/// ## Topics
///
/// ### State
/// - ``snapshot``
/// - ``changes``
/// - ``error``
/// - ``sections``
///
/// ### Records
/// - ``ids(in:)``
/// - ``record(at:)``
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@MainActor
@Observable
public final class FetchedResultsModel<Target: Record> {
    /// The latest snapshot; `nil` until the first one arrives.
    public private(set) var snapshot: ResultsSnapshot<Target>?
    /// The changes that led to ``snapshot``; `nil` for the first snapshot.
    public private(set) var changes: ResultsChanges<Target.ID>?
    /// Why observation stopped, when the request failed.
    public private(set) var error: (any Error)?

    @ObservationIgnored private let observation = TaskCancellation()

    /// Starts observing `controller`.
    public init(_ controller: FetchedResultsController<Target>) {
        observation.task = Task { [weak self] in
            do {
                for try await update in controller {
                    guard let self else { return }
                    self.snapshot = update.snapshot
                    self.changes = update.changes
                }
            } catch {
                self?.error = error
            }
        }
    }

    deinit {
        observation.cancel()
    }

    /// The sections of the latest snapshot (none before the first).
    public var sections: [ResultsSection] { snapshot?.sections ?? [] }

    /// The IDs of one section's records, in order.
    public func ids(in section: ResultsSection) -> ArraySlice<Target.ID> {
        snapshot?.ids[section.range] ?? []
    }

    /// The record at an index path of the latest snapshot; see ``ResultsSnapshot/record(at:)``.
    public func record(at indexPath: IndexPath) throws -> Target? {
        try snapshot?.record(at: indexPath)
    }
}

/// Holds a task so a deinitializer, which may run on any thread, can cancel it.
final class TaskCancellation: Sendable {
    private let stored = Locked<Task<Void, Never>?>(nil)

    /// The task to cancel.
    var task: Task<Void, Never>? {
        get { stored.withLock { $0 } }
        set { stored.withLock { $0 = newValue } }
    }

    /// Cancels the task.
    func cancel() {
        stored.withLock { $0?.cancel() }
    }
}
