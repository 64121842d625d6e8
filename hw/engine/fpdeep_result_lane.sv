// fpdeep result lane: one MAC lane's two result-bank halves of fpdeep_engine. Runs accumulate
// into half `asel` (read at s6, written back at s7) while half `dsel` drains (each word read
// and cleared). The only hazard of a run is an s6 read of the address s7 is writing
// (read-first RAM returns the old word), so that case takes the value being written
// (forwarding). BANKS = 0: a lane the engine's mode never writes, whose halves read zero.
// HALVES = 1: only half 0 is built (the engine then never selects half 1), which reads zero.
// A module of its own, not a generate block of the engine: Yosys elaborates it once, where a
// generate block per lane made the engine's elaboration quadratic in its lanes.
`default_nettype none

module fpdeep_result_lane #(
    parameter int ACCW  = 48,
    parameter int RD    = 64,   // depth of each half
    parameter int RAW   = 6,    // address bits ($clog2(RD), at least 1)
    parameter bit BANKS = 1'b1,
    parameter int HALVES = 2,
    parameter logic [8*11-1:0] RAM_STYLE = "auto"  // of both halves (fpdeep_sdp_ram)
) (
    input  wire logic            clk,
    input  wire logic            asel,        // the half runs accumulate into
    input  wire logic            dsel,        // the half being drained
    input  wire logic            draining,
    input  wire logic            drain_rd,    // the drain reads (and clears) word `dla`
    input  wire logic            drain_here,  // ... of this lane
    input  wire logic [RAW-1:0]  dla,
    input  wire logic            rd6,         // s6: a run reads word ra6 of this lane
    input  wire logic [RAW-1:0]  ra6,
    input  wire logic            wr7,         // s7: a run writes word ra7 of this lane
    input  wire logic [RAW-1:0]  ra7,
    input  wire logic [ACCW-1:0] sum7,        // s7: what the run adds to it
    output logic      [ACCW-1:0] q0,          // each half's last word read
    output logic      [ACCW-1:0] q1
);
    logic [ACCW-1:0] half_q [2];
    logic            fwd7;
    logic [ACCW-1:0] fwdv7, new7;
    always_comb new7 = (fwd7 ? fwdv7 : half_q[asel]) + sum7;

    for (genvar h = 0; h < 2; h++) begin : g_half
        if (BANKS && h < HALVES) begin : g_bank
            wire logic      own = draining && (dsel == 1'(h));
            wire logic      acc = !own && (asel == 1'(h));
            logic           wen, ren;
            logic [RAW-1:0] wadr, radr;
            always_comb begin
                wen  = own ? (drain_rd && drain_here) : (acc && wr7);
                wadr = own ? dla : ra7;
                ren  = own ? drain_rd : (acc && rd6);
                radr = own ? dla : ra6;
            end
            fpdeep_sdp_ram #(.WIDTH(ACCW), .DEPTH(RD), .RAM_STYLE(RAM_STYLE), .OUT_REG(1'b0))
                u_ram (.clk, .wr_en(wen), .wr_addr(wadr), .wr_data(own ? '0 : new7),
                       .rd_en(ren), .rd_addr(radr), .rd_data(half_q[h]));
        end else begin : g_none
            assign half_q[h] = '0;
        end
    end
    if (!BANKS) begin : g_no_banks
        /* verilator lint_off UNUSEDSIGNAL */
        wire logic unused = &{1'b0, dsel, draining, drain_rd, drain_here, dla, rd6};
        /* verilator lint_on UNUSEDSIGNAL */
    end

    always_ff @(posedge clk) begin
        fwd7  <= wr7 && (ra7 == ra6);
        fwdv7 <= new7;
    end
    assign q0 = half_q[0];
    assign q1 = half_q[1];
endmodule

`default_nettype wire
