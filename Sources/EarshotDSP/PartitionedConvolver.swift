import EarshotCore

/// Real-time convolution with a long response: uniformly partitioned overlap-save.
///
/// The response is cut into partitions of `partitionSize` samples, each transformed once (FFT
/// of twice that size). Every `partitionSize` input samples, one forward FFT enters the
/// frequency-domain delay line, the line is multiplied with the partitions and summed, and
/// one inverse FFT yields the next output block. Work per block is one FFT pair plus a
/// complex multiply-accumulate over all partitions, kept in split re/im arrays so it
/// vectorises. The delay is one partition (`partitionSize − 1` samples), whatever the host's
/// block size.
public final class PartitionedConvolver: AudioProcessor {
    public let partitionSize: Int
    /// The response per channel (one channel is shared by every input channel).
    public let response: [[Float]]
    private var channels: [ChannelState] = []
    private var fft: RealFFT?
    private var partitions: [SplitSpectra] = []  // per response channel

    /// Partition spectra, or the delay line: `count` spectra of `bins` split complex values,
    /// each padded to a multiple of 8 floats.
    private final class SplitSpectra {
        let count: Int, bins: Int, stride: Int
        let real: UnsafeMutablePointer<Float>
        let imaginary: UnsafeMutablePointer<Float>

        init(count: Int, bins: Int) {
            self.count = count
            self.bins = bins
            stride = (bins + 7) / 8 * 8
            real = .allocate(capacity: count * stride)
            imaginary = .allocate(capacity: count * stride)
            real.initialize(repeating: 0, count: count * stride)
            imaginary.initialize(repeating: 0, count: count * stride)
        }

        deinit {
            real.deallocate()
            imaginary.deallocate()
        }

        func clear() {
            real.update(repeating: 0, count: count * stride)
            imaginary.update(repeating: 0, count: count * stride)
        }

        /// Stores an interleaved spectrum as entry `index`.
        func store(_ spectrum: UnsafeMutableBufferPointer<Float>, at index: Int) {
            let re = real + index * stride, im = imaginary + index * stride
            for k in 0..<bins {
                re[k] = spectrum[2 * k]
                im[k] = spectrum[2 * k + 1]
            }
        }
    }

    private final class ChannelState {
        let input: UnsafeMutablePointer<Float>  // the last 2·B input samples (overlap-save)
        let output: UnsafeMutablePointer<Float>  // B samples ready to leave
        let delayLine: SplitSpectra
        let sumReal: UnsafeMutablePointer<Float>
        let sumImaginary: UnsafeMutablePointer<Float>
        var pending = 0
        var outputIndex = 1
        var newest = 0  // delay-line slot of the newest input spectrum

        init(partitionSize b: Int, partitionCount: Int, bins: Int) {
            input = .allocate(capacity: 2 * b)
            output = .allocate(capacity: b)
            delayLine = SplitSpectra(count: partitionCount, bins: bins)
            sumReal = .allocate(capacity: delayLine.stride)
            sumImaginary = .allocate(capacity: delayLine.stride)
            input.initialize(repeating: 0, count: 2 * b)
            output.initialize(repeating: 0, count: b)
            sumReal.initialize(repeating: 0, count: delayLine.stride)
            sumImaginary.initialize(repeating: 0, count: delayLine.stride)
        }

        deinit {
            input.deallocate()
            output.deallocate()
            sumReal.deallocate()
            sumImaginary.deallocate()
        }
    }

    public init(response: [[Float]], partitionSize: Int) throws {
        guard (1...8192).contains(partitionSize) else {
            throw DSPError.partitionSize(partitionSize)
        }
        guard !response.isEmpty, let length = response.first?.count, length > 0,
            response.allSatisfy({ $0.count == length })
        else { throw DSPError.emptyResponse }
        self.response = response
        self.partitionSize = partitionSize
    }

    public var latencySamples: Int { partitionSize - 1 }

    public func prepare(_ spec: ProcessSpec) throws {
        guard response.count == 1 || response.count == spec.channelCount else {
            throw DSPError.responseChannels(response: response.count, input: spec.channelCount)
        }
        let b = partitionSize
        let transform = RealFFT(size: 2 * b)
        let partitionCount = (response[0].count + b - 1) / b
        let bins = transform.binCount
        partitions = response.map { channel in
            let spectra = SplitSpectra(count: partitionCount, bins: bins)
            for p in 0..<partitionCount {
                transform.time.update(repeating: 0)
                for i in 0..<min(b, channel.count - p * b) { transform.time[i] = channel[p * b + i] }
                transform.forward()
                spectra.store(transform.spectrum, at: p)
            }
            return spectra
        }
        fft = transform
        channels = (0..<spec.channelCount).map { _ in
            ChannelState(partitionSize: b, partitionCount: partitionCount, bins: bins)
        }
    }

    public func reset() {
        for state in channels {
            state.input.update(repeating: 0, count: 2 * partitionSize)
            state.output.update(repeating: 0, count: partitionSize)
            state.delayLine.clear()
            state.pending = 0
            state.outputIndex = 1
            state.newest = 0
        }
    }

    public func process(_ block: inout AudioBlock) {
        guard let fft else { preconditionFailure("PartitionedConvolver.process before prepare") }
        let b = partitionSize
        for c in 0..<min(block.channelCount, channels.count) {
            let state = channels[c]
            let samples = block.channel(c)
            for i in 0..<samples.count {
                state.input[b + state.pending] = samples[i]
                state.pending += 1
                if state.pending == b {
                    convolveBlock(state, response: partitions[response.count == 1 ? 0 : c], fft: fft)
                }
                samples[i] = state.output[state.outputIndex]
                state.outputIndex += 1
            }
        }
    }

    private func convolveBlock(_ state: ChannelState, response: SplitSpectra, fft: RealFFT) {
        let b = partitionSize
        for i in 0..<(2 * b) { fft.time[i] = state.input[i] }
        fft.forward()
        let line = state.delayLine
        state.newest = (state.newest + line.count - 1) % line.count
        line.store(fft.spectrum, at: state.newest)

        // Σ_p X[newest + p] · H[p]: the delay line is a ring, walked in two straight runs.
        let stride = line.stride
        let sumRe = state.sumReal, sumIm = state.sumImaginary
        sumRe.update(repeating: 0, count: stride)
        sumIm.update(repeating: 0, count: stride)
        var p = 0
        while p < line.count {
            let slot = (state.newest + p) % line.count
            let run = min(line.count - slot, line.count - p)
            for q in 0..<run {
                multiplyAccumulate(
                    line.real + (slot + q) * stride, line.imaginary + (slot + q) * stride,
                    response.real + (p + q) * stride, response.imaginary + (p + q) * stride,
                    into: sumRe, sumIm, count: stride)
            }
            p += run
        }
        for k in 0..<line.bins {
            fft.spectrum[2 * k] = sumRe[k]
            fft.spectrum[2 * k + 1] = sumIm[k]
        }
        fft.inverse()
        // Overlap-save: the second half of the circular result is the linear one.
        for i in 0..<b { state.output[i] = fft.time[b + i] }
        state.input.update(from: state.input + b, count: b)
        state.pending = 0
        state.outputIndex = 0
    }

    /// sum += x · h over split complex arrays, eight bins at a time (`count` is a multiple of 8).
    @inline(__always)
    private func multiplyAccumulate(
        _ xr: UnsafeMutablePointer<Float>, _ xi: UnsafeMutablePointer<Float>,
        _ hr: UnsafeMutablePointer<Float>, _ hi: UnsafeMutablePointer<Float>,
        into sumRe: UnsafeMutablePointer<Float>, _ sumIm: UnsafeMutablePointer<Float>, count: Int
    ) {
        var k = 0
        while k < count {
            let a = UnsafeRawPointer(xr + k).loadUnaligned(as: SIMD8<Float>.self)
            let b = UnsafeRawPointer(xi + k).loadUnaligned(as: SIMD8<Float>.self)
            let c = UnsafeRawPointer(hr + k).loadUnaligned(as: SIMD8<Float>.self)
            let d = UnsafeRawPointer(hi + k).loadUnaligned(as: SIMD8<Float>.self)
            let re = UnsafeRawPointer(sumRe + k).loadUnaligned(as: SIMD8<Float>.self) + a * c - b * d
            let im = UnsafeRawPointer(sumIm + k).loadUnaligned(as: SIMD8<Float>.self) + a * d + b * c
            UnsafeMutableRawPointer(sumRe + k).storeBytes(of: re, as: SIMD8<Float>.self)
            UnsafeMutableRawPointer(sumIm + k).storeBytes(of: im, as: SIMD8<Float>.self)
            k += 8
        }
    }
}
