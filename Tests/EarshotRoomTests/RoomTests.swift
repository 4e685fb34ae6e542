import EarshotCore
import EarshotDSP
import EarshotRoom
import Foundation
import Testing

struct RoomCase: Decodable {
    var size: [Double], absorption: Double, max_order: Int, fs: Double, source: [Double], mic: [Double], rir: [Double]
}
struct IterationCase: Decodable { var source: [Float], response: [Float], generations: [[Double]] }

func fixture<T: Decodable>(_ name: String, as type: T.Type) throws -> T {
    let url = try #require(Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Fixtures"))
    return try JSONDecoder().decode(T.self, from: Data(contentsOf: url))
}

@Suite struct ImageSourceTests {
    @Test func matchesPyroomacoustics() throws {
        for c in try fixture("rooms", as: [RoomCase].self) {
            let room = try ShoeboxRoom(width: c.size[0], depth: c.size[1], height: c.size[2], absorption: c.absorption)
            let mine = try room.impulseResponse(
                source: RoomPoint(c.source[0], c.source[1], c.source[2]), microphone: RoomPoint(c.mic[0], c.mic[1], c.mic[2]),
                sampleRate: c.fs, maxOrder: c.max_order, highPassHz: nil)
            // pyroomacoustics leaves out the 1/(4π) of spherical spreading.
            let theirs = c.rir.map { $0 / (4 * Double.pi) }
            let n = min(mine.count, theirs.count)
            #expect(abs(mine.count - theirs.count) <= 2)
            var error = 0.0, energy = 0.0
            for i in 0..<n {
                error += (Double(mine[i]) - theirs[i]) * (Double(mine[i]) - theirs[i])
                energy += theirs[i] * theirs[i]
            }
            #expect(10 * log10(error / energy) < -40, "room \(c.size): difference \(10 * log10(error / energy)) dB")
        }
    }

    @Test func directSoundArrivesWhenAndAsLoudAsItShould() throws {
        let room = try ShoeboxRoom(width: 10, depth: 8, height: 4, absorption: 1)  // anechoic: only the direct path
        let source = RoomPoint(2, 2, 2), mic = RoomPoint(5, 6, 2)  // 5 m apart
        let h = try room.impulseResponse(source: source, microphone: mic, sampleRate: 16_000, maxOrder: 0, highPassHz: nil)
        let peak = h.indices.max { abs(h[$0]) < abs(h[$1]) }!
        let arrival = 5.0 / 343 * 16_000
        #expect(peak == Int(arrival.rounded()) + ShoeboxRoom.interpolationHalfLength)
        #expect(abs(Double(h.reduce(0, +)) - 1 / (4 * Double.pi * 5)) < 1e-3 / (4 * Double.pi * 5), "area of the arrival is 1/(4πd)")
    }

    @Test(arguments: [(5.0, 4.0, 3.0, 0.4), (8.0, 6.0, 3.5, 0.6), (4.0, 3.5, 2.7, 0.25)])
    func reverberationTimeIsWhatWasAskedFor(room dims: (Double, Double, Double, Double)) throws {
        let room = try ShoeboxRoom(width: dims.0, depth: dims.1, height: dims.2, rt60: dims.3)
        #expect(abs(room.predictedT30(absorption: room.absorption) - dims.3) < 1e-3)
        // A specular shoebox is not diffuse: Eyring, exact for a diffuse field with this
        // absorption, predicts a faster decay than the images give.
        #expect(room.eyringRT60 < room.sabineRT60 && room.eyringRT60 < dims.3)
        let h = try room.impulseResponse(source: RoomPoint(1.1, 1.3, 1.4), microphone: RoomPoint(dims.0 - 1.2, dims.1 - 0.9, 1.6), sampleRate: 8000)
        let broadband = try RoomAnalysis.analyze(h, sampleRate: 8000)[0]
        let t30 = try #require(broadband.t30)
        #expect(abs(t30 - dims.3) / dims.3 < 0.1, "T30 \(t30) s for a requested \(dims.3) s")
        let t20 = try #require(broadband.t20)
        #expect(abs(t20 - dims.3) / dims.3 < 0.1, "T20 \(t20) s")
    }

    @Test func refusesRoomsThatWouldNeedTooManyImages() throws {
        let closet = try ShoeboxRoom(width: 1, depth: 1, height: 1, absorption: 0.01)
        #expect(throws: RoomError.self) {
            try closet.impulseResponse(source: RoomPoint(0.5, 0.5, 0.5), microphone: RoomPoint(0.3, 0.3, 0.3), sampleRate: 8000, durationSeconds: 20)
        }
        // The same closet with a bounded order is fine.
        let h = try closet.impulseResponse(source: RoomPoint(0.5, 0.5, 0.5), microphone: RoomPoint(0.3, 0.3, 0.3), sampleRate: 8000, maxOrder: 4)
        #expect(!h.isEmpty)
    }

    @Test func refusesImpossibleRooms() {
        #expect(throws: RoomError.dimensions(width: 0, depth: 4, height: 3)) { try ShoeboxRoom(width: 0, depth: 4, height: 3, rt60: 0.5) }
        #expect(throws: RoomError.rt60OutOfRange(seconds: -1)) { try ShoeboxRoom(width: 5, depth: 4, height: 3, rt60: -1) }
        #expect(throws: RoomError.outsideRoom(width: 5, depth: 4, height: 3)) {
            try ShoeboxRoom(width: 5, depth: 4, height: 3, rt60: 0.5)
                .impulseResponse(source: RoomPoint(6, 1, 1), microphone: RoomPoint(1, 1, 1), sampleRate: 16_000)
        }
    }
}

@Suite struct AnalysisTests {
    /// Exponentially decaying noise with a known decay rate: the textbook test response.
    func syntheticDecay(rt60: Double, sampleRate: Double, seconds: Double, noiseFloorDB: Double? = nil) -> [Float] {
        var random = SeededRandom(seed: 42)
        let n = Int(seconds * sampleRate)
        return (0..<n).map { i in
            let t = Double(i) / sampleRate
            var x = random.nextGaussian() * pow(10, -3 * t / rt60)  // −60 dB after rt60 seconds
            if let floor = noiseFloorDB { x += random.nextGaussian() * pow(10, floor / 20) }
            return Float(x)
        }
    }

    @Test func recoversAKnownDecay() throws {
        for rt60 in [0.3, 0.8, 1.5] {
            let h = syntheticDecay(rt60: rt60, sampleRate: 16_000, seconds: rt60 * 1.5)
            let results = try RoomAnalysis.analyze(h, sampleRate: 16_000)
            let broadband = results[0]
            for value in [broadband.t20, broadband.t30, broadband.edt] {
                #expect(abs(try #require(value) - rt60) / rt60 < 0.05, "\(results[0]) for \(rt60)")
            }
            #expect(results.count == 1 + RoomAnalysis.octaveBands(sampleRate: 16_000).count)
            for band in results.dropFirst() where (band.bandHz ?? 0) >= 250 {
                #expect(abs(try #require(band.t30) - rt60) / rt60 < 0.1, "band \(band.bandHz!) Hz: \(band.t30!)")
            }
        }
    }

    @Test func ignoresTheNoiseFloor() throws {
        let h = syntheticDecay(rt60: 0.5, sampleRate: 16_000, seconds: 2, noiseFloorDB: -50)
        let t20 = try #require(try RoomAnalysis.analyze(h, sampleRate: 16_000)[0].t20)
        #expect(abs(t20 - 0.5) / 0.5 < 0.1, "T20 \(t20) with a −50 dB floor")
    }

    @Test func clarityOfAPureImpulse() throws {
        var h = [Float](repeating: 0, count: 16_000)
        h[100] = 1
        h[100 + 1600] = 0.1  // one echo 100 ms later, 20 dB down
        let broadband = try RoomAnalysis.analyze(h, sampleRate: 16_000)[0]
        #expect(abs(try #require(broadband.c50) - 20) < 0.01)
        #expect(abs(try #require(broadband.c80) - 20) < 0.01)
        #expect(abs(try #require(broadband.drr) - 20) < 0.01)
        #expect(throws: RoomError.silentImpulseResponse) { try RoomAnalysis.analyze([0, 0, 0], sampleRate: 16_000) }
    }
}

@Suite struct IterationAgainstSciPy {
    @Test func generationsMatchAnFFTConvolveLoop() throws {
        let reference = try fixture("iteration", as: IterationCase.self)
        let iteration = try IteratedConvolution(source: [reference.source], response: [reference.response])
        try iteration.run(through: 5, wanted: Set(1...5)) { k, channels in
            let expected = reference.generations[k - 1]
            var error = 0.0, energy = 0.0
            for i in expected.indices {
                error += (Double(channels[0][i]) - expected[i]) * (Double(channels[0][i]) - expected[i])
                energy += expected[i] * expected[i]
            }
            #expect(channels[0].count == expected.count)
            #expect((error / energy).squareRoot() <= 1e-4, "generation \(k)")
        }
    }
}
