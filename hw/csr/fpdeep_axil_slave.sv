// AXI4-Lite slave handshake for a register file: one write and one read in flight at a time.
//
// A write is done once both its address and its data have arrived: `wr_en` is high for one
// cycle with the word address, data and byte strobes, and the response is OKAY, or SLVERR
// when the register file raises `wr_err` for that address. A read answers one cycle after its
// address with the register file's `rd_data` for `rd_word` (combinational from the address on
// the bus), SLVERR when it raises `rd_err`. Reads have no side effects.
module fpdeep_axil_slave #(
    parameter int ADDR_W = 12  // byte address bits; registers are 32-bit words
) (
    input  logic              clk,
    input  logic              rst_n,
    // verilator lint_off UNUSEDSIGNAL
    // The protection bits are accepted and ignored: every register is open to every master,
    // and the low two address bits select a byte within a word, which the strobes say.
    input  logic [ADDR_W-1:0] s_axil_awaddr,
    input  logic [2:0]        s_axil_awprot,
    // verilator lint_on UNUSEDSIGNAL
    input  logic              s_axil_awvalid,
    output logic              s_axil_awready,
    input  logic [31:0]       s_axil_wdata,
    input  logic [3:0]        s_axil_wstrb,
    input  logic              s_axil_wvalid,
    output logic              s_axil_wready,
    output logic [1:0]        s_axil_bresp,
    output logic              s_axil_bvalid,
    input  logic              s_axil_bready,
    // verilator lint_off UNUSEDSIGNAL
    input  logic [ADDR_W-1:0] s_axil_araddr,
    input  logic [2:0]        s_axil_arprot,
    // verilator lint_on UNUSEDSIGNAL
    input  logic              s_axil_arvalid,
    output logic              s_axil_arready,
    output logic [31:0]       s_axil_rdata,
    output logic [1:0]        s_axil_rresp,
    output logic              s_axil_rvalid,
    input  logic              s_axil_rready,
    // register file side
    output logic              wr_en,
    output logic [ADDR_W-3:0] wr_word,
    output logic [31:0]       wr_data,
    output logic [3:0]        wr_strb,
    input  logic              wr_err,
    output logic [ADDR_W-3:0] rd_word,
    input  logic [31:0]       rd_data,
    input  logic              rd_err
);
    localparam logic [1:0] OKAY = 2'b00;
    localparam logic [1:0] SLVERR = 2'b10;

    logic aw_held, w_held;

    assign s_axil_awready = !aw_held;
    assign s_axil_wready = !w_held;
    // The write takes effect in the cycle its response is raised.
    assign wr_en = aw_held && w_held && !s_axil_bvalid;

    always_ff @(posedge clk) begin
        if (!rst_n) begin
            aw_held <= 1'b0;
            w_held <= 1'b0;
            wr_word <= '0;
            wr_data <= '0;
            wr_strb <= '0;
            s_axil_bvalid <= 1'b0;
            s_axil_bresp <= OKAY;
        end else begin
            if (s_axil_awvalid && s_axil_awready) begin
                aw_held <= 1'b1;
                wr_word <= s_axil_awaddr[ADDR_W-1:2];
            end
            if (s_axil_wvalid && s_axil_wready) begin
                w_held <= 1'b1;
                wr_data <= s_axil_wdata;
                wr_strb <= s_axil_wstrb;
            end
            if (wr_en) begin
                aw_held <= 1'b0;
                w_held <= 1'b0;
                s_axil_bvalid <= 1'b1;
                s_axil_bresp <= wr_err ? SLVERR : OKAY;
            end else if (s_axil_bready) begin
                s_axil_bvalid <= 1'b0;
            end
        end
    end

    assign rd_word = s_axil_araddr[ADDR_W-1:2];
    assign s_axil_arready = !s_axil_rvalid;

    always_ff @(posedge clk) begin
        if (!rst_n) begin
            s_axil_rvalid <= 1'b0;
            s_axil_rdata <= '0;
            s_axil_rresp <= OKAY;
        end else if (s_axil_arvalid && s_axil_arready) begin
            s_axil_rvalid <= 1'b1;
            s_axil_rdata <= rd_data;
            s_axil_rresp <= rd_err ? SLVERR : OKAY;
        end else if (s_axil_rready) begin
            s_axil_rvalid <= 1'b0;
        end
    end
endmodule
