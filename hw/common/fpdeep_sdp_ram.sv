// fpdeep simple dual-port RAM: one write port, one synchronous read port, one clock.
// Written in the template Vivado and yosys infer as block RAM ("block"), UltraRAM ("ultra"),
// LUT RAM ("distributed") or leave to the tool ("auto"); OUT_REG adds the output register
// that block RAM and UltraRAM need at high clock rates (read latency 2 instead of 1).
// Contents start at zero, which the engine's accumulating result banks rely on: in
// simulation the initial loops below clear them; on the FPGA configuration does (block RAM,
// LUT RAM and registers take their all-zero default INIT, UltraRAM is cleared), so synthesis
// (SYNTHESIS defined, as Yosys does and the Vivado projects fpdeep writes do) skips the loops,
// which a synthesis front end unrolls word by word: hours for a 2^19-word bank.
`default_nettype none

module fpdeep_sdp_ram #(
    parameter int    WIDTH     = 16,
    parameter int    DEPTH     = 1024,
    // a packed string (up to 11 characters): yosys has no `string` parameters
    parameter logic [8*11-1:0] RAM_STYLE = "auto",
    parameter bit    OUT_REG   = 1'b0
) (
    input  wire logic                     clk,
    input  wire logic                     wr_en,
    input  wire logic [$clog2(DEPTH)-1:0] wr_addr,
    input  wire logic [WIDTH-1:0]         wr_data,
    input  wire logic                     rd_en,
    input  wire logic [$clog2(DEPTH)-1:0] rd_addr,
    output logic      [WIDTH-1:0]         rd_data
);
    logic [WIDTH-1:0] rd_q;

    // Attribute values must be constants, so each style is its own generate branch.
    if (RAM_STYLE == 88'("block")) begin : g_block
        (* ram_style = "block" *) logic [WIDTH-1:0] mem [DEPTH];
`ifndef SYNTHESIS
        initial for (int i = 0; i < DEPTH; i++) mem[i] = '0;
`endif
        always_ff @(posedge clk) begin
            if (wr_en) mem[wr_addr] <= wr_data;
            if (rd_en) rd_q <= mem[rd_addr];
        end
    end else if (RAM_STYLE == 88'("ultra")) begin : g_ultra
        (* ram_style = "ultra" *) logic [WIDTH-1:0] mem [DEPTH];
`ifndef SYNTHESIS
        initial for (int i = 0; i < DEPTH; i++) mem[i] = '0;
`endif
        always_ff @(posedge clk) begin
            if (wr_en) mem[wr_addr] <= wr_data;
            if (rd_en) rd_q <= mem[rd_addr];
        end
    end else if (RAM_STYLE == 88'("distributed")) begin : g_dist
        (* ram_style = "distributed" *) logic [WIDTH-1:0] mem [DEPTH];
`ifndef SYNTHESIS
        initial for (int i = 0; i < DEPTH; i++) mem[i] = '0;
`endif
        always_ff @(posedge clk) begin
            if (wr_en) mem[wr_addr] <= wr_data;
            if (rd_en) rd_q <= mem[rd_addr];
        end
    end else begin : g_auto
        logic [WIDTH-1:0] mem [DEPTH];
`ifndef SYNTHESIS
        initial for (int i = 0; i < DEPTH; i++) mem[i] = '0;
`endif
        always_ff @(posedge clk) begin
            if (wr_en) mem[wr_addr] <= wr_data;
            if (rd_en) rd_q <= mem[rd_addr];
        end
    end

    if (OUT_REG) begin : g_oreg
        always_ff @(posedge clk) rd_data <= rd_q;
    end else begin : g_noreg
        assign rd_data = rd_q;
    end
endmodule

`default_nettype wire
