// fpdeep link framing, transmit side: NCH valid/ready/last streams share one board-to-board
// link. A link word is {channel, last, data}; a channel keeps the link from its first beat to
// its last (whole packets, so the receiver never reassembles), and idle channels are skipped
// in round-robin order. Real boards put Aurora 64B/66B (or similar) behind m_*.
`default_nettype none

module fpdeep_link_tx #(
    parameter int DW  = 16,
    parameter int NCH = 2,
    parameter int CHW = (NCH > 1) ? $clog2(NCH) : 1
) (
    input  wire logic                 clk,
    input  wire logic                 rst,
    input  wire logic [NCH*DW-1:0]    s_data,
    input  wire logic [NCH-1:0]       s_last,
    input  wire logic [NCH-1:0]       s_valid,
    output logic      [NCH-1:0]       s_ready,
    output logic [CHW+DW:0]           m_data,   // {channel, last, data}
    output logic                      m_valid,
    input  wire logic                 m_ready
);
    logic [CHW-1:0] cur, pick;
    logic           locked;

    // Next channel with data, searching from the one after the last served.
    always_comb begin
        pick = cur;
        for (int k = NCH; k >= 1; k--) begin
            if (s_valid[(int'(cur) + k) % NCH]) pick = CHW'((int'(cur) + k) % NCH);
        end
    end
    wire logic [CHW-1:0] sel = locked ? cur : pick;

    assign m_valid = s_valid[sel];
    assign m_data  = {sel, s_last[sel], s_data[sel*DW +: DW]};
    always_comb begin
        s_ready = '0;
        s_ready[sel] = m_ready;
    end

    always_ff @(posedge clk) begin
        if (rst) begin
            cur    <= '0;
            locked <= 1'b0;
        end else if (m_valid && m_ready) begin
            cur    <= sel;
            locked <= !s_last[sel];
        end
    end
endmodule

`default_nettype wire
