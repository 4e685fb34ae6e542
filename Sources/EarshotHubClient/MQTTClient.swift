import CMosquitto
import EarshotCore
import Foundation

/// An MQTT connection through libmosquitto: its own network thread, automatic reconnection,
/// and a last will the broker publishes if the connection dies.
public final class MQTTClient: @unchecked Sendable {
    public struct Will: Sendable {
        public var topic: String
        public var payload: String
        public init(topic: String, payload: String) {
            self.topic = topic
            self.payload = payload
        }
    }

    public let host: String
    public let port: Int
    private let handle: OpaquePointer
    private let lock = NSLock()
    private var onConnect: @Sendable () -> Void = {}
    private var onMessage: @Sendable (String, String) -> Void = { _, _ in }

    private static let library: Void = { mosquitto_lib_init() }()

    /// Connects to `url` (`mqtt://HOST[:PORT]`, port 1883 by default) and starts the network
    /// thread. Throws with the broker's address when it cannot be reached.
    public init(url: String, clientID: String, will: Will?) throws {
        guard let parsed = URL(string: url), parsed.scheme == "mqtt", let host = parsed.host, !host.isEmpty else {
            throw HubClientError.notABrokerURL(url)
        }
        self.host = host
        port = parsed.port ?? 1883
        _ = Self.library
        guard let handle = mosquitto_new(clientID, true, nil) else {
            throw EarshotError.internalFailure("libmosquitto could not make a client")
        }
        self.handle = handle
        mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        if let will {
            mosquitto_will_set(handle, will.topic, Int32(will.payload.utf8.count), will.payload, 1, true)
        }
        mosquitto_connect_callback_set(handle) { _, user, code in
            guard code == 0, let user else { return }
            Unmanaged<MQTTClient>.fromOpaque(user).takeUnretainedValue().connected()
        }
        mosquitto_message_callback_set(handle) { _, user, message in
            guard let user, let message = message?.pointee, let topic = message.topic else { return }
            let payload = message.payload.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: Int(message.payloadlen)), as: UTF8.self) } ?? ""
            Unmanaged<MQTTClient>.fromOpaque(user).takeUnretainedValue().received(String(cString: topic), payload)
        }
        mosquitto_reconnect_delay_set(handle, 1, 10, true)
    }

    /// Sets what happens on every (re)connection and on every message, then connects.
    public func start(onConnect: @escaping @Sendable () -> Void, onMessage: @escaping @Sendable (String, String) -> Void) throws {
        lock.withLock {
            self.onConnect = onConnect
            self.onMessage = onMessage
        }
        let status = mosquitto_connect(handle, host, Int32(port), 30)
        guard status == Int32(MOSQ_ERR_SUCCESS.rawValue) else {
            throw EarshotError.deviceFailure("cannot reach the MQTT broker at \(host):\(port): \(Self.describe(status))")
        }
        mosquitto_loop_start(handle)
    }

    private func connected() { lock.withLock { onConnect }() }
    private func received(_ topic: String, _ payload: String) { lock.withLock { onMessage }(topic, payload) }

    /// Queues a message (libmosquitto keeps QoS 1 messages until the broker has them).
    @discardableResult
    public func publish(_ topic: String, _ payload: String, qos: Int32 = 1, retain: Bool = false) -> Bool {
        mosquitto_publish(handle, nil, topic, Int32(payload.utf8.count), payload, qos, retain) == Int32(MOSQ_ERR_SUCCESS.rawValue)
    }

    public func subscribe(_ topic: String, qos: Int32 = 1) {
        mosquitto_subscribe(handle, nil, topic, qos)
    }

    /// Waits (up to `seconds`) for queued messages to reach the broker, then disconnects cleanly.
    public func close(waitingUpTo seconds: Double = 2) {
        let deadline = Date().addingTimeInterval(seconds)
        while mosquitto_want_write(handle), Date() < deadline { usleep(10_000) }
        usleep(100_000)  // QoS 1 acknowledgements
        mosquitto_disconnect(handle)
        mosquitto_loop_stop(handle, false)
        mosquitto_destroy(handle)
    }

    static func describe(_ status: Int32) -> String {
        if status == Int32(MOSQ_ERR_ERRNO.rawValue) { return String(cString: strerror(errno)) }
        return String(cString: mosquitto_strerror(status))
    }
}
