import EarshotCore
import Foundation

/// One binary frame of `/api/live`: what the microphone hears right now, about 20 a second.
///
/// Little-endian, a 16-byte header and one byte per band:
///
///     0  u8   version (1)
///     1  u8   flags: 1 = an alert is sounding, 2 = idle (no microphone feeds the hub)
///     2  u16  band count N
///     4  u16  lowest band edge, Hz
///     6  u16  highest band edge, Hz (bands are log-spaced between the two)
///     8  i16  level, dBFS × 100 (RMS over the last 50 ms)
///    10  i16  peak, dBFS × 100
///    12  u32  sequence number (per source)
///    16  N×u8 band power: dB = −120 + byte / 2 (0 means −120 or below)
public struct LiveFrame: Equatable, Sendable {
    public static let version: UInt8 = 1
    public static let headerBytes = 16
    public static let maximumBands = 512

    public var alerting: Bool
    public var idle: Bool
    public var lowHz: Int
    public var highHz: Int
    public var levelDBFS: Float
    public var peakDBFS: Float
    public var sequence: UInt32
    public var bandsDB: [Float]

    public init(alerting: Bool = false, idle: Bool = false, lowHz: Int, highHz: Int, levelDBFS: Float, peakDBFS: Float, sequence: UInt32, bandsDB: [Float]) {
        self.alerting = alerting
        self.idle = idle
        self.lowHz = lowHz
        self.highHz = highHz
        self.levelDBFS = levelDBFS
        self.peakDBFS = peakDBFS
        self.sequence = sequence
        self.bandsDB = bandsDB
    }

    /// The frame a hub sends while nothing feeds it.
    public static func idle(sequence: UInt32) -> LiveFrame {
        LiveFrame(idle: true, lowHz: 0, highHz: 0, levelDBFS: -200, peakDBFS: -200, sequence: sequence, bandsDB: [])
    }

    public var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(Self.headerBytes + bandsDB.count)
        func put16(_ value: UInt16) { out += [UInt8(value & 0xFF), UInt8(value >> 8)] }
        func centi(_ decibels: Float) -> UInt16 { UInt16(bitPattern: Int16(max(-327.68, min(327.67, decibels)) * 100)) }
        out.append(Self.version)
        out.append((alerting ? 1 : 0) | (idle ? 2 : 0))
        put16(UInt16(bandsDB.count))
        put16(UInt16(clamping: lowHz))
        put16(UInt16(clamping: highHz))
        put16(centi(levelDBFS))
        put16(centi(peakDBFS))
        put16(UInt16(sequence & 0xFFFF))
        put16(UInt16(sequence >> 16))
        for decibels in bandsDB { out.append(UInt8(max(0, min(255, ((decibels + 120) * 2).rounded())))) }
        return out
    }

    /// Reads a frame; refuses anything that is not exactly one well-formed frame.
    public init<Bytes: Collection<UInt8>>(bytes: Bytes) throws {
        let bytes = Array(bytes)
        guard bytes.count >= Self.headerBytes else { throw HubRequestError("a live frame needs a 16-byte header, got \(bytes.count) bytes") }
        func get16(_ at: Int) -> UInt16 { UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }
        guard bytes[0] == Self.version else { throw HubRequestError("live frame version \(bytes[0]) is not \(Self.version)") }
        guard bytes[1] & ~3 == 0 else { throw HubRequestError("unknown live frame flags \(bytes[1])") }
        let count = Int(get16(2))
        guard count <= Self.maximumBands, bytes.count == Self.headerBytes + count else {
            throw HubRequestError("a live frame with \(count) bands must be \(Self.headerBytes + count) bytes (at most \(Self.maximumBands) bands), got \(bytes.count)")
        }
        alerting = bytes[1] & 1 != 0
        idle = bytes[1] & 2 != 0
        lowHz = Int(get16(4))
        highHz = Int(get16(6))
        guard count == 0 || lowHz < highHz else { throw HubRequestError("live frame bands must run upwards, not \(lowHz)–\(highHz) Hz") }
        levelDBFS = Float(Int16(bitPattern: get16(8))) / 100
        peakDBFS = Float(Int16(bitPattern: get16(10))) / 100
        sequence = UInt32(get16(12)) | UInt32(get16(14)) << 16
        bandsDB = bytes[Self.headerBytes...].map { Float($0) / 2 - 120 }
    }
}
