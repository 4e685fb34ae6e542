import EarshotCore
import EarshotDSP
import Foundation

/// A point in a room, in metres from one corner.
public struct RoomPoint: Equatable, Sendable {
    public var x, y, z: Double
    public init(_ x: Double, _ y: Double, _ z: Double) { (self.x, self.y, self.z) = (x, y, z) }
}

/// A rectangular room whose six walls absorb the same share of sound energy at every
/// frequency, simulated with the image-source method of Allen and Berkley.
public struct ShoeboxRoom: Sendable {
    public let width, depth, height: Double
    /// Share of energy each wall absorbs per reflection (0 … 1).
    public let absorption: Double
    public var speedOfSound = 343.0

    public init(width: Double, depth: Double, height: Double, absorption: Double) throws {
        guard [width, depth, height].allSatisfy({ $0.isFinite && $0 > 0 && $0 <= 1000 }) else {
            throw RoomError.dimensions(width: width, depth: depth, height: height)
        }
        guard absorption.isFinite, absorption > 0, absorption <= 1 else {
            throw RoomError.absorption(absorption)
        }
        (self.width, self.depth, self.height, self.absorption) = (width, depth, height, absorption)
    }

    /// A room tuned so its simulated response decays with T30 = `rt60` seconds.
    ///
    /// Sabine and Eyring both assume a diffuse field; a shoebox with specular walls is not one.
    /// Sound travelling along the longest dimension meets the fewest walls, so the late decay
    /// is slower than Eyring predicts (by 40 % or more in an ordinary 5×4×3 m room). The
    /// absorption is therefore found by solving for the image-source decay itself; see
    /// `predictedT30(absorption:)`.
    public init(width: Double, depth: Double, height: Double, rt60: Double) throws {
        guard rt60.isFinite, rt60 > 0, rt60 <= 20 else {
            throw RoomError.rt60OutOfRange(seconds: rt60)
        }
        let trial = try ShoeboxRoom(width: width, depth: depth, height: height, absorption: 0.5)
        // T30 falls as absorption rises: bisect on log α.
        var low = log(1e-4), high = log(0.9999)
        guard trial.predictedT30(absorption: exp(high)) < rt60 else {
            throw RoomError.tooDry(width: width, depth: depth, height: height, rt60: rt60)
        }
        guard trial.predictedT30(absorption: exp(low)) > rt60 else {
            throw RoomError.tooLive(width: width, depth: depth, height: height, rt60: rt60)
        }
        for _ in 0..<50 {
            let middle = (low + high) / 2
            if trial.predictedT30(absorption: exp(middle)) > rt60 { low = middle } else { high = middle }
        }
        try self.init(width: width, depth: depth, height: height, absorption: exp((low + high) / 2))
    }

    /// The T30 the image-source model produces for a given absorption.
    ///
    /// An image at distance ct in direction u has met g(u)·ct walls, g(u) = |uₓ|/W + |u_y|/D +
    /// |u_z|/H, and images are spread evenly in space, so the energy arriving at time t is the
    /// average over directions of (1 − α)^(g(u)·ct). Its backward integral has a closed form,
    /// ⟨e^(k g t) / (−k g)⟩ with k = c·ln(1 − α); T30 is fitted to it from −5 to −35 dB, as it
    /// would be to a measured response.
    public func predictedT30(absorption alpha: Double) -> Double {
        let k = speedOfSound * log(1 - alpha)
        // Directions spread evenly over the sphere (Fibonacci lattice); by symmetry one octant would do.
        let count = 600
        let golden = Double.pi * (3 - 5.0.squareRoot())
        let rates: [Double] = (0..<count).map { i in
            let z = 1 - 2 * (Double(i) + 0.5) / Double(count)
            let r = (1 - z * z).squareRoot(), phi = golden * Double(i)
            return k * (abs(r * cos(phi)) / width + abs(r * sin(phi)) / depth + abs(z) / height)
        }
        func schroederDB(_ t: Double) -> Double {
            10 * log10(rates.reduce(0) { $0 + exp($1 * t) / -$1 })
        }
        let start = schroederDB(0)
        // Step out until the curve passes −35 dB, then regress over −5…−35 dB.
        var horizon = 0.01
        while schroederDB(horizon) - start > -36 && horizon < 1000 { horizon *= 1.5 }
        let steps = 400
        var sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0, n = 0.0
        for i in 0...steps {
            let t = horizon * Double(i) / Double(steps)
            let level = schroederDB(t) - start
            guard level <= -5, level >= -35 else { continue }
            sx += t; sy += level; sxx += t * t; sxy += t * level; n += 1
        }
        let slope = (n * sxy - sx * sy) / (n * sxx - sx * sx)
        return -60 / slope
    }

    public var volume: Double { width * depth * height }
    public var surface: Double { 2 * (width * depth + depth * height + width * height) }

    /// Reverberation time by Sabine: 0.161 V / (S α).
    public var sabineRT60: Double { 24 * log(10) * volume / (speedOfSound * surface * absorption) }
    /// Reverberation time by Eyring: 0.161 V / (−S ln(1 − α)).
    public var eyringRT60: Double {
        absorption >= 1 ? 0 : 24 * log(10) * volume / (speedOfSound * surface * -log(1 - absorption))
    }

    /// Half the length of the windowed-sinc kernel that places each arrival between samples.
    /// Every arrival is delayed by this many samples so the kernel is causal.
    public static let interpolationHalfLength = 40

    /// The most image sources one response may sum (about a second of work and 160 MB).
    public static let maximumImages = 1e7

    public func contains(_ p: RoomPoint) -> Bool {
        p.x > 0 && p.x < width && p.y > 0 && p.y < depth && p.z > 0 && p.z < height
    }

    /// The impulse response from `source` to `microphone`: every image source within reach
    /// adds β^reflections / (4π d) at delay d / c, placed by a Hann-windowed sinc.
    ///
    /// - Parameters:
    ///   - maxOrder: keep images with at most this many reflections; nil keeps every image
    ///     whose sound arrives within `durationSeconds` (by default 1.25 × T30, about 75 dB
    ///     of decay).
    ///   - highPassHz: every wall reflects with the same sign, so arrivals pile up into a
    ///     growing DC component no real room has, which also drags out the broadband decay.
    ///     A zero-phase high-pass (second order, run both ways) at this frequency removes it;
    ///     nil gives the raw image sum.
    public func impulseResponse(
        source: RoomPoint, microphone: RoomPoint, sampleRate: Double,
        maxOrder: Int? = nil, durationSeconds: Double? = nil, highPassHz: Double? = 20
    ) throws -> [Float] {
        try EarshotError.validate(sampleRate: sampleRate)
        guard contains(source), contains(microphone) else {
            throw RoomError.outsideRoom(width: width, depth: depth, height: height)
        }
        let duration = durationSeconds ?? max(0.05, 1.25 * predictedT30(absorption: absorption))
        guard duration.isFinite, duration > 0, duration <= 60 else {
            throw RoomError.responseTooLong(seconds: duration)
        }
        if let maxOrder, maxOrder < 0 || maxOrder > 200 {
            throw RoomError.reflectionOrder(maxOrder)
        }
        let reach = duration * speedOfSound
        let reflection = (1 - absorption).squareRoot()
        // Images fill space at one per room volume: refuse what would not finish or fit.
        let imageCount = maxOrder.map { 4.0 / 3 * pow(Double($0 + 1), 3) } ?? 4.0 / 3 * Double.pi * pow(reach, 3) / volume
        guard imageCount <= Self.maximumImages else {
            throw RoomError.tooManyImages(count: imageCount, maximum: Self.maximumImages)
        }

        // Allen–Berkley: along each axis the image at lattice index n with parity q sits at
        // 2nL + (1 − 2q)s and took |n − q| + |n| reflections.
        func images(_ s: Double, _ m: Double, _ length: Double) -> [(offset: Double, reflections: Int)] {
            let span = maxOrder.map { $0 / 2 + 1 } ?? Int((reach / (2 * length)).rounded(.up)) + 1
            var list: [(Double, Int)] = []
            for n in -span...span {
                for q in 0...1 { list.append((2 * Double(n) * length + Double(1 - 2 * q) * s - m, abs(n - q) + abs(n))) }
            }
            return list
        }
        let xs = images(source.x, microphone.x, width)
        let ys = images(source.y, microphone.y, depth)
        let zs = images(source.z, microphone.z, height)
        let reachSquared = maxOrder == nil ? reach * reach : .infinity
        var arrivals: [(distance: Double, amplitude: Double)] = []
        for ix in xs where ix.offset * ix.offset <= reachSquared {
            for iy in ys where ix.offset * ix.offset + iy.offset * iy.offset <= reachSquared {
                for iz in zs {
                    let order = ix.reflections + iy.reflections + iz.reflections
                    let squared = ix.offset * ix.offset + iy.offset * iy.offset + iz.offset * iz.offset
                    guard order <= (maxOrder ?? .max), squared <= reachSquared else { continue }
                    let distance = squared.squareRoot()
                    arrivals.append((distance, pow(reflection, Double(order)) / (4 * Double.pi * max(distance, 1e-3))))
                }
            }
        }

        let half = Self.interpolationHalfLength
        let kernelLength = 2 * half + 1
        let window = (0..<kernelLength).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(kernelLength - 1)) }
        let farthest = arrivals.map(\.distance).max() ?? 0
        var response = [Double](repeating: 0, count: Int((farthest / speedOfSound * sampleRate).rounded(.up)) + kernelLength + 1)
        for arrival in arrivals {
            let position = arrival.distance / speedOfSound * sampleRate + Double(half)
            let whole = Int(position.rounded(.down)), fraction = position - Double(whole)
            // sin(π(m − f)) = −(−1)ᵐ sin(πf) for integer m: one sine per arrival, not per tap.
            let sineOfFraction = sin(Double.pi * fraction)
            var sign: Double = half % 2 == 0 ? 1 : -1  // (−1)^(k − half) at k = 0
            for k in 0..<kernelLength {
                let x = Double(k - half) - fraction
                let sinc = x == 0 ? 1 : -sign * sineOfFraction / (Double.pi * x)
                response[whole - half + k] += arrival.amplitude * sinc * window[k]
                sign = -sign
            }
        }
        let raw = response.map(Float.init)
        guard let highPassHz else { return raw }
        guard highPassHz > 0, highPassHz < sampleRate / 2 else {
            throw RoomError.highPass(hz: highPassHz)
        }
        return BiquadFilter(.highPass, frequencyHz: highPassHz, sampleRate: sampleRate).zeroPhase(raw, sampleRate: sampleRate)
    }
}
