import EarshotCore
import EarshotIO
import Foundation

/// Which measured rooms and speech takes a scene draws on: two disjoint sets, so that a
/// detector can be judged in rooms (positions) and on takes it never heard.
public enum RoomSet: String, CaseIterable, Sendable {
    case training, evaluation
}

extension SceneMaterial {
    /// The recordings of a shared data folder at `sampleRate`, for one side of the split:
    /// - speech: 40 Free Spoken Digit Dataset takes (`speech/fsdd`) drawn with `random`; takes 0–4 of
    ///   every digit and speaker are the dataset's own test split, so they are evaluation only;
    /// - backgrounds: every recording in `noise/`;
    /// - rooms: every other IoSR azimuth (`rir/iosr_room_a`) and one of the two seminar-room clap
    ///   responses for each side.
    /// A folder without some of these gives what it has (nothing, for a missing folder).
    public init(folder data: String, sampleRate rate: Double, rooms: RoomSet, random: inout SeededRandom) throws {
        self.init()
        let files = FileManager.default
        func load(_ path: String) throws -> [Float] {
            let (info, buffer) = try AudioFile.read(path: path)
            return try Resampler.resample([buffer.toArrays()[0]], from: info.sampleRate, to: rate)[0]
        }
        let fsdd = (data as NSString).appendingPathComponent("speech/fsdd")
        func isTestTake(_ name: String) -> Bool {
            Int(name.dropLast(4).split(separator: "_").last ?? "").map { $0 < 5 } ?? false
        }
        if let names = try? files.contentsOfDirectory(atPath: fsdd)
            .filter({ $0.hasSuffix(".wav") && isTestTake($0) == (rooms == .evaluation) }).sorted(), !names.isEmpty {
            for _ in 0..<40 { speech.append(try load((fsdd as NSString).appendingPathComponent(names.randomElement(using: &random)!))) }
        }
        let noiseFolder = (data as NSString).appendingPathComponent("noise")
        for name in (try? files.contentsOfDirectory(atPath: noiseFolder).filter { $0.hasSuffix(".wav") }.sorted()) ?? [] {
            noises.append((name, try load((noiseFolder as NSString).appendingPathComponent(name))))
        }
        let rirFolder = (data as NSString).appendingPathComponent("rir")
        let azimuths = ((try? files.contentsOfDirectory(atPath: (rirFolder as NSString).appendingPathComponent("iosr_room_a"))) ?? [])
            .filter { $0.hasSuffix(".wav") }.sorted()
        let held = rooms == .training ? 0 : 1
        let names = [rooms == .training ? "seminar_room_clap_mono.wav" : "seminar_room_clap_binaural.wav"]
            + azimuths.enumerated().filter { $0.offset % 2 == held }.map { "iosr_room_a/" + $0.element }
        for name in names {
            let path = (rirFolder as NSString).appendingPathComponent(name)
            if files.fileExists(atPath: path) { self.rooms.append((name, try load(path))) }
        }
    }
}
