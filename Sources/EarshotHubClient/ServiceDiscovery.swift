import CDNSSD
import EarshotCore
import Foundation

/// DNS-SD for the hub (`_earshot._tcp`), through the Bonjour API that Avahi's compatibility
/// library provides: the hub announces itself, and a monitor finds it without a URL.
public enum ServiceDiscovery {
    public static let serviceType = "_earshot._tcp"

    static let noDaemon = "no Avahi daemon is running (install and start avahi-daemon)"

    /// The sentence for a DNS-SD error code.
    static func describe(_ error: DNSServiceErrorType) -> String {
        switch Int(error) {
        case kDNSServiceErr_Unknown: return noDaemon  // what Avahi's layer answers when it cannot reach the daemon
        case kDNSServiceErr_NameConflict: return "another service on the network already has this name"
        default: return "DNS-SD error \(error)"
        }
    }

    /// Avahi warns on stderr, once per process, that a program uses its compatibility layer.
    static func quietAvahi() { setenv("AVAHI_COMPAT_NOWARN", "1", 1) }

    /// Waits up to `seconds` for the reference's socket and hands what arrived to its callbacks;
    /// false when nothing came.
    static func process(_ reference: DNSServiceRef, seconds: Double) -> Bool {
        var descriptor = pollfd(fd: DNSServiceRefSockFD(reference), events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, Int32(max(0, seconds) * 1000)) > 0 else { return false }
        return DNSServiceProcessResult(reference) == kDNSServiceErr_NoError
    }
}

/// The hub announced on the local network while it lives.
public final class HubAnnouncement: @unchecked Sendable {
    /// The name announced: `name`, or "name (2)"… when another hub has it.
    public let name: String
    private let reference: DNSServiceRef
    private let lock = NSLock()
    private var stopped = false

    /// Announces `name` on `port`; throws with a clear sentence when no Avahi daemon runs.
    public init(name: String, port: Int) throws {
        ServiceDiscovery.quietAvahi()
        var txt: [UInt8] = []
        for entry in ["path=/", "version=1"] { txt.append(UInt8(entry.utf8.count)); txt += entry.utf8 }
        var error = DNSServiceErrorType(kDNSServiceErr_NoError)
        for candidate in [name] + (2...9).map({ "\(name) (\($0))" }) {
            var reference: DNSServiceRef?
            error = DNSServiceRegister(&reference, 0, 0, candidate, ServiceDiscovery.serviceType, nil, nil, UInt16(port).bigEndian,
                                       UInt16(txt.count), txt, { _, _, _, _, _, _, _ in }, nil)
            if error == kDNSServiceErr_NameConflict { continue }
            guard error == kDNSServiceErr_NoError, let reference else { break }
            self.name = candidate
            self.reference = reference
            // Avahi's replies (the registration's outcome) must be read for it to go on.
            Thread.detachNewThread { [self] in
                while !lock.withLock({ stopped }) { _ = ServiceDiscovery.process(self.reference, seconds: 0.2) }
                DNSServiceRefDeallocate(self.reference)
            }
            return
        }
        throw EarshotError.serviceUnavailable("cannot announce the hub by DNS-SD: \(ServiceDiscovery.describe(error))")
    }

    public func stop() {
        lock.withLock { stopped = true }
    }
}

/// Finds a hub on the local network.
public enum HubFinder {
    public struct Found: Equatable, Sendable {
        public var name: String
        public var url: String
    }

    private final class Results {
        var services: [(name: String, type: String, domain: String, interface: UInt32)] = []
        var host: String?
        var port: UInt16 = 0
        var address: String?
        var error = DNSServiceErrorType(kDNSServiceErr_NoError)
    }

    /// The first hub that answers within `seconds` (`named`: only one whose name contains it).
    public static func find(named: String? = nil, seconds: Double = 5) throws -> Found {
        ServiceDiscovery.quietAvahi()
        let results = Results()
        let context = Unmanaged.passUnretained(results).toOpaque()
        let deadline = Date().addingTimeInterval(seconds)
        func remaining() -> Double { deadline.timeIntervalSinceNow }

        var browser: DNSServiceRef?
        let browsing = DNSServiceBrowse(&browser, 0, 0, ServiceDiscovery.serviceType, nil, { _, flags, interface, error, name, type, domain, context in
            let results = Unmanaged<Results>.fromOpaque(context!).takeUnretainedValue()
            guard error == kDNSServiceErr_NoError else { results.error = error; return }
            guard flags & DNSServiceFlags(kDNSServiceFlagsAdd) != 0, let name, let type, let domain else { return }
            results.services.append((String(cString: name), String(cString: type), String(cString: domain), interface))
        }, context)
        guard browsing == kDNSServiceErr_NoError, let browser else {
            throw EarshotError.serviceUnavailable("cannot look for a hub by DNS-SD: \(ServiceDiscovery.describe(browsing)); give the hub's URL")
        }
        defer { DNSServiceRefDeallocate(browser) }
        func wanted() -> (name: String, type: String, domain: String, interface: UInt32)? {
            results.services.first { named == nil || $0.name.localizedCaseInsensitiveContains(named!) }
        }
        while wanted() == nil, results.error == kDNSServiceErr_NoError, remaining() > 0 {
            _ = ServiceDiscovery.process(browser, seconds: remaining())
        }
        guard let service = wanted() else {
            if results.error != kDNSServiceErr_NoError {
                throw EarshotError.serviceUnavailable("cannot look for a hub by DNS-SD: \(ServiceDiscovery.describe(results.error))")
            }
            let which = named.map { "named like '\($0)' " } ?? ""
            throw EarshotError.serviceUnavailable("no Earshot hub \(which)announced itself on the local network within \(Int(seconds)) s; give its URL")
        }

        var resolver: DNSServiceRef?
        let resolving = DNSServiceResolve(&resolver, 0, service.interface, service.name, service.type, service.domain, { _, _, _, error, _, host, port, _, _, context in
            let results = Unmanaged<Results>.fromOpaque(context!).takeUnretainedValue()
            guard error == kDNSServiceErr_NoError, let host else { results.error = error; return }
            results.host = String(cString: host)
            results.port = UInt16(bigEndian: port)
        }, context)
        guard resolving == kDNSServiceErr_NoError, let resolver else {
            throw EarshotError.serviceUnavailable("found hub '\(service.name)' but cannot resolve it: \(ServiceDiscovery.describe(resolving))")
        }
        defer { DNSServiceRefDeallocate(resolver) }
        while results.host == nil, results.error == kDNSServiceErr_NoError, remaining() > 0 {
            _ = ServiceDiscovery.process(resolver, seconds: remaining())
        }
        guard let host = results.host else {
            throw EarshotError.serviceUnavailable("found hub '\(service.name)' but it did not say where it is within \(Int(seconds)) s")
        }

        // The host's IPv4 address over mDNS too: the system resolver may not know .local names.
        var query: DNSServiceRef?
        let querying = DNSServiceQueryRecord(&query, 0, service.interface, host, UInt16(kDNSServiceType_A), UInt16(kDNSServiceClass_IN), { _, _, _, error, _, _, _, length, data, _, context in
            let results = Unmanaged<Results>.fromOpaque(context!).takeUnretainedValue()
            guard error == kDNSServiceErr_NoError, length == 4, let data else { return }
            let bytes = data.assumingMemoryBound(to: UInt8.self)
            results.address = "\(bytes[0]).\(bytes[1]).\(bytes[2]).\(bytes[3])"
        }, context)
        if querying == kDNSServiceErr_NoError, let query {
            defer { DNSServiceRefDeallocate(query) }
            while results.address == nil, remaining() > 0 { _ = ServiceDiscovery.process(query, seconds: min(remaining(), 2)) }
        }
        let address = results.address ?? (host.hasSuffix(".") ? String(host.dropLast()) : host)
        return Found(name: service.name, url: "http://\(address):\(results.port)")
    }
}
