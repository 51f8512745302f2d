import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What one HTTP request of sync carries: a push or a pull, as `{"push": …}` or `{"pull": …}`.
public enum SyncHTTPRequest: Sendable, Hashable, Codable {
    /// A push.
    case push(PushRequest)
    /// A pull.
    case pull(PullRequest)

    private enum CodingKeys: String, CodingKey {
        case push, pull
    }

    /// Decodes the one-key object ``encode(to:)`` writes.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if container.contains(.push) {
            self = .push(try container.decode(PushRequest.self, forKey: .push))
        } else if container.contains(.pull) {
            self = .pull(try container.decode(PullRequest.self, forKey: .pull))
        } else {
            throw SyncError.malformedMessage(
                field: "(the message)", reason: "a sync request is {\"push\": …} or {\"pull\": …}")
        }
    }

    /// Encodes the request as an object with one key, its kind.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .push(let request): try container.encode(request, forKey: .push)
        case .pull(let request): try container.encode(request, forKey: .pull)
        }
    }
}

/// What the server answers over HTTP: the push's or pull's response, or a refusal of the request
/// as a whole (it could not be read, or the server failed), as `{"push": …}`, `{"pull": …}` or
/// `{"refusal": …}`.
public enum SyncHTTPResponse: Sendable, Hashable, Codable {
    /// The answer to a push.
    case push(PushResponse)
    /// The answer to a pull.
    case pull(PullResponse)
    /// The request was refused as a whole.
    case refusal(SyncError)

    private enum CodingKeys: String, CodingKey {
        case push, pull, refusal
    }

    /// Decodes the one-key object ``encode(to:)`` writes.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if container.contains(.push) {
            self = .push(try container.decode(PushResponse.self, forKey: .push))
        } else if container.contains(.pull) {
            self = .pull(try container.decode(PullResponse.self, forKey: .pull))
        } else {
            self = .refusal(try container.decode(SyncError.self, forKey: .refusal))
        }
    }

    /// Encodes the response as an object with one key, its kind.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .push(let response): try container.encode(response, forKey: .push)
        case .pull(let response): try container.encode(response, forKey: .pull)
        case .refusal(let error): try container.encode(error, forKey: .refusal)
        }
    }
}

extension SyncServer {
    /// Answers one HTTP request's body: the function an app's HTTP server calls for its sync
    /// route, with the request's credentials (its bearer token, say). The body is a
    /// ``SyncHTTPRequest`` in JSON; the answer a ``SyncHTTPResponse`` in JSON (with sorted keys),
    /// always, so the route answers `200` and the client reads refusals as typed errors.
    ///
    /// ```swift
    /// let answer = await server.handle(body, credentials: bearerToken)
    /// ```
    public func handle(_ body: Data, credentials: String?) async -> Data {
        let response: SyncHTTPResponse
        var stored: [RowKey: String] = [:]
        do {
            switch try SyncHTTPRequest(json: body) {
            case .push(let request): response = .push(try await push(request, credentials: credentials))
            case .pull(let request):
                let served = try await servePull(request, credentials: credentials)
                response = .pull(served.response)
                stored = served.stored
            }
        } catch let error as SyncError {
            response = .refusal(error)
        } catch let error as DecodingError {
            response = .refusal(.malformedMessage(field: "(the message)", reason: "it is not a sync request: \(error)"))
        } catch {
            response = .refusal(.serverFailure(reason: "\(error)"))
        }
        // Every value of a response encodes (a NaN never enters a store), so this does not fail.
        return (try? response.json(stored: stored))
            ?? Data("{\"refusal\":{\"serverFailure\":{\"reason\":\"encoding\"}}}".utf8)
    }
}

/// The default transport: each push and pull is an HTTP `POST` of a ``SyncHTTPRequest`` to one
/// URL, answered by ``SyncServer/handle(_:credentials:)`` on the server; credentials travel as a
/// bearer token in the `Authorization` header.
///
/// ```swift
/// let transport = URLSessionSyncTransport(url: URL(string: "https://api.example.com/sync")!, credentials: token)
/// ```
public struct URLSessionSyncTransport: SyncTransport {
    /// Where requests go.
    public let url: URL
    /// The bearer token sent with each request.
    public let credentials: String?
    private let session: URLSession

    /// A transport posting to `url` with `credentials`, through `session`.
    public init(url: URL, credentials: String? = nil, session: URLSession = .shared) {
        self.url = url
        self.credentials = credentials
        self.session = session
    }

    /// Posts a push; throws the server's refusal as a ``SyncError``.
    public func push(_ request: PushRequest) async throws -> PushResponse {
        guard case .push(let response) = try await send(.push(request)) else {
            throw SyncError.malformedMessage(field: "(the response)", reason: "a push was answered as a pull")
        }
        return response
    }

    /// Posts a pull; throws the server's refusal as a ``SyncError``.
    public func pull(_ request: PullRequest) async throws -> PullResponse {
        guard case .pull(let response) = try await send(.pull(request)) else {
            throw SyncError.malformedMessage(field: "(the response)", reason: "a pull was answered as a push")
        }
        return response
    }

    private func send(_ message: SyncHTTPRequest) async throws -> SyncHTTPResponse {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if let credentials { request.setValue("Bearer \(credentials)", forHTTPHeaderField: "Authorization") }
        request.httpBody = try message.json()
        let (data, _) = try await session.data(for: request)
        let response = try SyncHTTPResponse(json: data)
        if case .refusal(let error) = response { throw error }
        return response
    }
}
